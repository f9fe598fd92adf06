#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# PARMACS programs against the installed Squall ($1): examples/parmacs ($2/parmacs) built with
# the compiler wrapper squall-parmacs-cc (in one step, and compiled then linked) and with
# squall_parmacs_program() in a CMake project, each run on 2 nodes; --showme, and the
# wrapper's misuse messages.
set -euo pipefail
source "$(dirname "$0")/common.sh"  # quiet, $scratch
prefix="$1"
source_dir="$2/parmacs"
wrapper="$prefix/bin/squall-parmacs-cc"

check_run() {  # program: its output on 2 nodes
  local out
  out=$(timeout 60 "$prefix/bin/squallrun" -n 2 "$1" -p2)
  grep -q 'hello: 2 processes, ids add up to 1' <<<"$out" || { echo "$out"; exit 1; }
  [ "$(grep -c 'hello: process [01] of 2' <<<"$out")" -eq 2 ] || { echo "$out"; exit 1; }
}

"$wrapper" -O2 -o "$scratch/hello" "$source_dir/hello.C" "$source_dir/hello.H"
check_run "$scratch/hello"
(cd "$scratch" && "$wrapper" -c "$source_dir/hello.C" "$source_dir/hello.H" && "$wrapper" hello.o -o hello2)
[ -x "$scratch/hello2" ]

quiet cmake -S "$source_dir" -B "$scratch/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix"
quiet cmake --build "$scratch/build"
check_run "$scratch/build/hello_parmacs"

showme=$("$wrapper" --showme -o hello "$source_dir/hello.C" "$source_dir/hello.H")
grep -q "^m4 -s -Ulen -Uindex .*/share/squall/parmacs.m4 .*/hello.C > \$SCRATCH/hello.c$" <<<"$showme"
grep -q "^m4 .*/hello.H > \$SCRATCH/hello.h$" <<<"$showme"
grep -q -- "-fPIC .*-o hello \$SCRATCH/hello.c -L.* -lsquall-tsm -lsquall-kf .*-Wl,-z,now$" <<<"$showme" || { echo "$showme"; exit 1; }

expect_error() {  # message, wrapper arguments...: the wrapper must fail with that message
  local message="$1" out
  shift
  if out=$("$wrapper" "$@" 2>&1); then echo "squall-parmacs-cc $* succeeded"; exit 1; fi
  grep -qF -- "$message" <<<"$out" || { echo "$out"; exit 1; }
}
expect_error "squall-parmacs-cc: $scratch/missing.C: no such file" "$scratch/missing.C"
expect_error "usage: squall-parmacs-cc"
expect_error "squall-parmacs-cc: nothing to compile" "$source_dir/hello.H"
echo "install_parmacs: built with squall-parmacs-cc and squall_parmacs_program, ran on 2 nodes"
