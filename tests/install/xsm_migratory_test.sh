#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The user protocol of libxsm/README.md (examples/xsm-migratory in $2) built against the
# installed Squall ($1) with find_package(Squall COMPONENTS xsm), run on 2 and 4 nodes. The
# walkthrough must show each step's code as migratory.hpp has it.
set -euo pipefail
source "$(dirname "$0")/common.sh"  # quiet, $scratch
prefix="$1"
source_dir="$2/xsm-migratory"
readme="$2/../libxsm/README.md"

# Every line of every fenced C++ block of the walkthrough is a line of migratory.hpp.
awk '/^```c\+\+/ { inside = 1; next } /^```/ { inside = 0; next } inside && NF { print }' "$readme" >"$scratch/shown"
[ -s "$scratch/shown" ] || { echo "install_xsm_migratory: libxsm/README.md shows no C++ code"; exit 1; }
while IFS= read -r line; do
  grep -qxF -- "$line" "$source_dir/migratory.hpp" || { echo "install_xsm_migratory: README line not in migratory.hpp: $line"; exit 1; }
done <"$scratch/shown"

quiet cmake -S "$source_dir" -B "$scratch/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix"
quiet cmake --build "$scratch/build"
for n in 2 4; do
  out=$(cd "$scratch/build" && timeout 60 "$prefix/bin/squallrun" -n $n ./migratory)
  expected="$((100 * n)) visits, last by node $((n - 1)); $((100 * n)) migratory misses on $n nodes"
  grep -qxF "$expected" <<<"$out" || { echo "expected: $expected"; echo "$out"; exit 1; }
done
echo "install_xsm_migratory: examples/xsm-migratory built against the installed Squall and ran on 2 and 4 nodes"
