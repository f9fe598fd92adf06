#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# SQUALL_SHOW_CONFIG and the warning for unknown SQUALL_* variables, on 2 nodes of this host:
# under squallrun and under plain `mpirun -n 2` (which binds each node to one core) the nodes
# count the host's processors, not their own mask, and run with the settings for as many
# processors as nodes; told by SQUALL_OVERSUBSCRIBED that the processors are shared, the
# settings for more nodes than processors.
# Usage: show_config_test.sh SQUALLRUN MPIRUN PROGRAM (MPIRUN may be "").
set -euo pipefail
squallrun=$1 mpirun=$2 program=$3

if [ "$(nproc --all)" -lt 2 ]; then
  echo "skipped: fewer than 2 processors"
  exit 0
fi

expect() {  # what, output, extended regex that a line must match
  if ! grep -Eq -- "$3" <<<"$2"; then
    printf 'FAIL (%s): no line matches "%s" in:\n%s\n' "$1" "$3" "$2"
    exit 1
  fi
}
normal_settings() {  # what, output
  expect "$1" "$2" '^squall:   SQUALL_SPIN_US +default +50$'
  expect "$1" "$2" '^squall:   SQUALL_PROGRESS_SPIN_US +default +10$'
  expect "$1" "$2" '^squall:   SQUALL_LINGER_US +default +50$'
  expect "$1" "$2" '^squall:   SQUALL_LOCK_BIAS +default +1$'
  expect "$1" "$2" '^squall:   nodes per host: 2 on [0-9]+ processors$'
}

out=$(SQUALL_SHOW_CONFIG=1 SQUALL_SPIN_USS=3 SQUALL_BENCH_NODES=2 SQUALL_GRACE=4 timeout 60 "$squallrun" -n 2 "$program" 2>&1)
normal_settings squallrun "$out"
expect squallrun "$out" '^squall:   SQUALL_BIND +default +1$'
expect squallrun "$out" '^squall:   SQUALL_OVERSUBSCRIBED +default +0$'
expect squallrun "$out" '^squall:   SQUALL_SHOW_CONFIG +environment +1$'
expect squallrun "$out" '^squall:   SQUALL_POKE +default +1$'
expect squallrun "$out" '^squall:   SQUALL_GRACE +environment +4 \(squallrun\)$'
expect squallrun "$out" '^squall:   processors of each node: node 0: [0-9,-]+, node 1: [0-9,-]+$'
expect squallrun "$out" '^squall: node 0: warning: unused environment variable SQUALL_SPIN_USS \(did you mean SQUALL_SPIN_US\?\)$'
[ "$(grep -c 'unused environment variable' <<<"$out")" = 1 ] || { printf 'FAIL: one warning expected, once:\n%s\n' "$out"; exit 1; }
[ "$(grep -c 'configuration in force' <<<"$out")" = 1 ] || { printf 'FAIL: one table expected:\n%s\n' "$out"; exit 1; }

# Told that the processors are shared, the nodes take the settings for more nodes than
# processors, and do not bind.
out=$(SQUALL_SHOW_CONFIG=1 SQUALL_OVERSUBSCRIBED=1 timeout 60 "$squallrun" -n 2 "$program" 2>&1)
expect oversubscribed "$out" '^squall:   SQUALL_OVERSUBSCRIBED +environment +1$'
expect oversubscribed "$out" '^squall:   SQUALL_SPIN_US +default +5$'
expect oversubscribed "$out" '^squall:   SQUALL_PROGRESS_SPIN_US +default +0$'
expect oversubscribed "$out" '^squall:   SQUALL_LOCK_BIAS +default +0$'
expect oversubscribed "$out" '^squall:   SQUALL_BIND +default +0$'
expect oversubscribed "$out" '^squall:   SQUALL_POKE +default +0$'

if [ -n "$mpirun" ]; then
  out=$(SQUALL_SHOW_CONFIG=1 timeout 120 "$mpirun" -n 2 "$program" 2>&1)
  normal_settings mpirun "$out"
fi
echo "passed"
