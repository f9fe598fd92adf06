#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# pkg-config against the installed Squall ($1, version $2): the modules and their Requires,
# a C++ TSM program from `pkg-config --cflags --libs squall-tsm` and a libarrays one run on
# 2 nodes, and a C
# program from `--cflags-only-I` (no -std=c++20 for C).
set -euo pipefail
source "$(dirname "$0")/common.sh"  # quiet, $scratch
prefix="$1"
version="$2"
consumer="$(cd "$(dirname "$0")" && pwd)/consumer"
PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name squall-kf.pc)")
export PKG_CONFIG_PATH

for module in squall-kf squall-tsm squall-chaos squall-xsm squall-arrays; do
  [ "$(pkg-config --modversion "$module")" = "$version" ]
  pkg-config --cflags "$module" | grep -q -- '-std=c++20'
done
pkg-config --libs squall-chaos | grep -q -- '-lsquall-chaos .*-lsquall-kf'
pkg-config --libs squall-xsm | grep -q -- '-lsquall-xsm .*-lsquall-tsm .*-lsquall-kf'
pkg-config --libs squall-arrays | grep -q -- '-lsquall-arrays .*-lsquall-kf'
libdir=$(pkg-config --variable=libdir squall-kf)

# shellcheck disable=SC2046  # the flags are words
c++ "$consumer/consumer_tsm.cpp" -o "$scratch/consumer_tsm" $(pkg-config --cflags --libs squall-tsm) -Wl,-rpath,"$libdir"
out=$(timeout 60 "$prefix/bin/squallrun" -n 2 "$scratch/consumer_tsm")
[ "$(grep -c 'read 7' <<<"$out")" -eq 2 ] || { echo "$out"; exit 1; }
# shellcheck disable=SC2046
c++ "$consumer/consumer_arrays.cpp" -o "$scratch/consumer_arrays" $(pkg-config --cflags --libs squall-arrays) -Wl,-rpath,"$libdir"
out=$(timeout 60 "$prefix/bin/squallrun" -n 2 "$scratch/consumer_arrays")
[ "$(grep -c 'total 30' <<<"$out")" -eq 2 ] || { echo "$out"; exit 1; }
# shellcheck disable=SC2046
cc -Werror "$consumer/consumer.c" -o "$scratch/consumer_c" $(pkg-config --cflags-only-I --libs squall-kf) -Wl,-rpath,"$libdir"
"$scratch/consumer_c" | grep -q "consumer_c: node 0 of 1, Squall $version"
echo "install_pkg_config: built with pkg-config and ran against $prefix"
