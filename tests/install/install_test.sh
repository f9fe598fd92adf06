#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, builds tests/install/consumer against it with
# find_package(Squall), and runs it alone and under the installed squallrun; then builds the
# PARMACS macros test by hand with the installed parmacs.m4 and runs it on 2 nodes.
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
# A PARMACS program by hand, as README.md says: the installed macro file, m4, cc.
libdir=$(dirname "$(find "$scratch/prefix" -name 'libsquall-tsm.so' | head -1)")
m4 -s -Ulen -Uindex "$scratch/prefix/share/squall/parmacs.m4" "$source_dir/../../tsm/parmacs/macros.C" > "$scratch/macros.c"
cc -fPIC -Wl,-z,now -I"$scratch/prefix/include" "$scratch/macros.c" -o "$scratch/macros" \
  -L"$libdir" -lsquall-tsm -lsquall-kf -Wl,-rpath,"$libdir"
out=$("$scratch/prefix/bin/squallrun" -n 2 "$scratch/macros" -p 2)
grep -q "macros: ok on 2 processes" <<<"$out"
echo "install_find_package: installed, found, built and ran against $scratch/prefix"
