#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# find_package(Squall) with a component Squall does not have: optional, it is reported not
# found; required, the configuration fails naming it and the real components.
set -euo pipefail
source "$(dirname "$0")/common.sh"  # quiet, $scratch
prefix="$1"

cat >"$scratch/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(bad_component LANGUAGES C)
find_package(Squall REQUIRED COMPONENTS tsm OPTIONAL_COMPONENTS warp)
message(STATUS "optional warp found: '${Squall_warp_FOUND}', tsm found: '${Squall_tsm_FOUND}'")
find_package(Squall REQUIRED COMPONENTS tsm warp)
CMAKE
if out=$(cmake -S "$scratch" -B "$scratch/build" -DCMAKE_PREFIX_PATH="$prefix" 2>&1); then
  echo "$out"; echo "install_bad_component: a missing required component was accepted"; exit 1
fi
grep -q "optional warp found: 'FALSE', tsm found: 'TRUE'" <<<"$out" || { echo "$out"; exit 1; }
grep -q "Squall has no component 'warp'; its components are: kf, tsm, chaos" <<<"$out" || { echo "$out"; exit 1; }
echo "install_bad_component: an unknown component is refused by name"
