#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, builds tests/install/consumer against it with
# find_package(Squall), and runs it alone and under the installed squallrun.
set -euo pipefail
build_dir="$1"
source_dir="$(cd "$(dirname "$0")" && pwd)/consumer"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

cmake --install "$build_dir" --prefix "$scratch/prefix" >/dev/null
cmake -S "$source_dir" -B "$scratch/build" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/build" >/dev/null
"$scratch/build/consumer" | grep -q "consumer: node 0 of 1 got 42"
"$scratch/build/consumer_c" | grep -q "consumer_c: node 0 of 1"
out=$("$scratch/prefix/bin/squallrun" -n 3 "$scratch/build/consumer")
[ "$(grep -c 'got 42' <<<"$out")" -eq 3 ]
out=$("$scratch/prefix/bin/squallrun" -n 2 "$scratch/build/consumer_tsm")
[ "$(grep -c 'read 7' <<<"$out")" -eq 2 ]
echo "install_find_package: installed, found, built and ran against $scratch/prefix"
