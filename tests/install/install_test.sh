#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds tests/install/consumer against the installed Squall ($1) with find_package(Squall
# COMPONENTS ...), and runs it alone and under the installed squallrun: the C++ and C APIs,
# TSM, libarrays and the version header.
set -euo pipefail
source "$(dirname "$0")/common.sh"  # quiet, $scratch
prefix="$1"
version="$2"
source_dir="$(cd "$(dirname "$0")" && pwd)/consumer"

quiet cmake -S "$source_dir" -B "$scratch" -G Ninja -DCMAKE_PREFIX_PATH="$prefix"
quiet cmake --build "$scratch"
"$scratch/consumer" | grep -q "consumer: node 0 of 1 got 42 from Squall $version"
"$scratch/consumer_c" | grep -q "consumer_c: node 0 of 1, Squall $version"
out=$(timeout 60 "$prefix/bin/squallrun" -n 3 "$scratch/consumer")
[ "$(grep -c 'got 42' <<<"$out")" -eq 3 ]
out=$(timeout 60 "$prefix/bin/squallrun" -n 2 "$scratch/consumer_tsm")
[ "$(grep -c 'read 7' <<<"$out")" -eq 2 ]
out=$(timeout 60 "$prefix/bin/squallrun" -n 2 "$scratch/consumer_arrays")
[ "$(grep -c 'total 30' <<<"$out")" -eq 2 ] || { echo "$out"; exit 1; }
echo "install_find_package: found, built and ran against $prefix"
