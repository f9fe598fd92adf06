#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A job over UCX whose libsquall-ucx.so comes from another build (foreign_ucx_module.cpp, with
# a stamp of its own or with none) ends at once with an error naming the module, instead of
# calling into it. The runtime looks for the module beside its own library: the test puts a
# copy of the library and the foreign module in a folder of their own, found first through
# LD_LIBRARY_PATH (the programs' RUNPATH comes after it).
# Usage: ucx_module_test.sh SQUALLRUN PROGRAM LIBRARY_DIR MODULE...
set -uo pipefail
squallrun=$1 program=$2 libdir=$3
shift 3
folder=$(mktemp -d)
trap 'rm -rf "$folder"' EXIT
cp -P "$libdir"/libsquall-kf.so* "$folder"/
status=0
for module in "$@"; do
  cp "$module" "$folder"/libsquall-ucx.so
  out=$(LD_LIBRARY_PATH="$folder${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 60 "$squallrun" -n 2 --transport ucx \
        "$program" stats 2>&1)
  code=$?
  if [[ $code -eq 0 || $code -eq 124 ]] || ! grep -q "libsquall-ucx.so is not the module of this Squall library" <<<"$out" ||
     grep -q "foreign_ucx_module: called" <<<"$out"; then
    echo "FAIL: ${module##*/}: exit $code, output:"
    echo "$out"
    status=1
  else
    echo "ok: ${module##*/} refused (exit $code): $(grep -m1 'is not the module' <<<"$out")"
  fi
done
exit $status
