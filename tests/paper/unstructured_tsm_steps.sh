#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The TSM steps' counts on 2 nodes at the small size fall as the paper says: RCB cuts the
# misses of the block partition severalfold, the reduction cuts them again and takes no locks.
# usage: unstructured_tsm_steps.sh SQUALLRUN BIN_DIR
set -euo pipefail
squallrun=$1 bin=$2
figure() {  # figure STEP KEY: KEY's number from STEP's JSON line, the median of three runs
  # (misses depend on how the two nodes' accesses interleave: one run in a loaded CI machine
  # gave the block partition 8446 misses where six quiet runs gave 9499-13479)
  for run in 1 2 3; do
    timeout 120 "$squallrun" -n 2 "$bin/unstructured_tsm_$1" --nodes 2000 --iterations 5 --json | tail -1 |
      grep -o "\"$2\":[0-9.e+]*" | cut -d: -f2 | cut -d. -f1
  done | sort -n | sed -n 2p
}
initial=$(figure initial misses) partition1=$(figure partition1 misses) reduction=$(figure reduction misses)
reduction_locks=$(figure reduction lock_acquires) partition1_locks=$(figure partition1 lock_acquires)
echo "misses: initial $initial, partition1 $partition1, reduction $reduction;" \
  "lock acquires: partition1 $partition1_locks, reduction $reduction_locks"
fail() { echo "FAILED: $1"; exit 1; }
(( initial > 2 * partition1 )) || fail "RCB (partition1) should cut the block partition's misses at least in half"
# Most of partition1's misses are its locked updates of the same few boundary blocks by both
# nodes, so how many depends on how the nodes' edge loops overlap: 1024-2875 with two busy loops
# beside the run, 1799-3801 quiet, 4300-4950 with both nodes on one CPU, against the reduction's
# 397-408 in every setting (2026-11-27; a loaded CI run gave 1547 against 397). Twofold is the
# paper's direction with room for that spread.
(( partition1 > 2 * reduction )) || fail "the reduction should cut partition1's misses at least in half"
(( partition1_locks > 0 )) || fail "partition1 should lock its external nodes"
(( reduction_locks == 0 )) || fail "the reduction takes no locks"
echo "ok"
