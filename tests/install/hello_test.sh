#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# README's first program, examples/hello ($2/hello), built against the installed Squall ($1)
# as its CMakeLists.txt stands (no CMAKE_CXX_STANDARD: squall::kf brings C++20) and in a
# project that asks for C++17 (squall::kf still brings C++20); each run on 2 nodes. README.md
# must show hello.cpp and its CMakeLists.txt as they are.
set -euo pipefail
source "$(dirname "$0")/common.sh"  # quiet, $scratch
prefix="$1"
source_dir="$2/hello"

# Each fenced block of README.md into $scratch/readme.N; one of them must be each file.
awk -v dir="$scratch" '/^```/ { if (inside) { inside = 0; close(f) } else { inside = 1; f = dir "/readme." ++n }; next }
                       inside { print > f }' "$2/../README.md"
for file in hello.cpp CMakeLists.txt; do
  shown=0
  for block in "$scratch"/readme.*; do cmp -s "$block" "$source_dir/$file" && shown=1; done
  [ $shown = 1 ] || { echo "install_hello: README.md does not show examples/hello/$file as it is"; exit 1; }
done

for standard in "" 17; do
  build="$scratch/build$standard"
  quiet cmake -S "$source_dir" -B "$build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    ${standard:+-DCMAKE_CXX_STANDARD=$standard}
  quiet cmake --build "$build"
  out=$(cd "$build" && timeout 60 "$prefix/bin/squallrun" -n 2 ./hello)
  grep -q 'node 0: 2 nodes, ids add up to 1, 1048576 bytes in bulk' <<<"$out" || { echo "$out"; exit 1; }
  [ "$(grep -c '"hello from node [01]" from node [01]' <<<"$out")" -eq 2 ] || { echo "$out"; exit 1; }
  [ "$(grep -c 'squared is' <<<"$out")" -eq 2 ] || { echo "$out"; exit 1; }
done
echo "install_hello: examples/hello built (with and without CMAKE_CXX_STANDARD) and ran on 2 nodes"
