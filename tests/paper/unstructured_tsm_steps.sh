#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The TSM steps' counts on 2 nodes at the small size fall as the paper says: RCB cuts far fewer
# edges than the block partition and so misses less, the reduction cuts the misses again and
# takes no locks.
# usage: unstructured_tsm_steps.sh SQUALLRUN BIN_DIR
set -euo pipefail
squallrun=$1 bin=$2
run() {  # run STEP: STEP's JSON line
  timeout 120 "$squallrun" -n 2 "$bin/unstructured_tsm_$1" --nodes 2000 --iterations 5 --json | tail -1
}
key() { grep -o "\"$1\":[0-9.e+]*" | cut -d: -f2 | cut -d. -f1; }  # key KEY < LINE: KEY's integer part
median() { sort -n | sed -n 3p; }  # of five

# Misses are not fixed: they depend on how the two nodes' accesses interleave. Measured on the
# Intel VM (2026-11-30, five runs each): the block partition 6464-16927 quiet, 4463-11702 beside
# two busy loops, 35657-68537 with both nodes on one CPU; RCB 1306-2827, 1115-2419 and 4662; the
# reduction 399-409 in every setting. A loaded CI run once gave medians of 5706 against 3391, and
# one round beside busy loops 3800 against 3603. So the three steps run in turn, five rounds, each
# round compared within itself (a change of load between rounds then moves both sides), and the
# median round decides.
rounds=$(for round in 1 2 3 4 5; do
  initial=$(run initial) partition1=$(run partition1) reduction=$(run reduction)
  m_initial=$(key misses <<<"$initial") m_partition1=$(key misses <<<"$partition1")
  m_reduction=$(key misses <<<"$reduction")
  echo "round $round misses: initial $m_initial, partition1 $m_partition1, reduction $m_reduction;" \
    "lock acquires: partition1 $(key lock_acquires <<<"$partition1"), reduction $(key lock_acquires <<<"$reduction")" >&2
  echo "$(( 100 * m_initial / m_partition1 )) $(( 100 * m_partition1 / m_reduction ))" \
    "$(key lock_acquires <<<"$partition1") $(key lock_acquires <<<"$reduction")" \
    "$(key cut_edges_pct <<<"$initial") $(key cut_edges_pct <<<"$partition1")"
done)
initial_over_partition1=$(cut -d' ' -f1 <<<"$rounds" | median)
partition1_over_reduction=$(cut -d' ' -f2 <<<"$rounds" | median)
partition1_locks=$(cut -d' ' -f3 <<<"$rounds" | median) reduction_locks=$(cut -d' ' -f4 <<<"$rounds" | sort -n | tail -1)
# The partitions' cuts are fixed by the mesh: any round says them.
initial_cut=$(head -1 <<<"$rounds" | cut -d' ' -f5) partition1_cut=$(head -1 <<<"$rounds" | cut -d' ' -f6)
echo "cut edges: block ${initial_cut}%, RCB ${partition1_cut}%;" \
  "misses (median round): initial/partition1 ${initial_over_partition1}%, partition1/reduction ${partition1_over_reduction}%"

fail() { echo "FAILED: $1"; exit 1; }
(( initial_cut > 4 * partition1_cut )) || fail "RCB should cut at least four times fewer edges than the block partition"
# The median round ran 4.0-14.7 in every setting above; 1.25 keeps the paper's direction with room.
(( initial_over_partition1 >= 125 )) || fail "RCB (partition1) should miss at least a fifth less than the block partition"
# Most of partition1's misses are its locked updates of the same few boundary blocks by both
# nodes, 1024-4950 whatever the load, against the reduction's 397-409; twofold has room for that.
(( partition1_over_reduction >= 200 )) || fail "the reduction should cut partition1's misses at least in half"
(( partition1_locks > 0 )) || fail "partition1 should lock its external nodes"
(( reduction_locks == 0 )) || fail "the reduction takes no locks"
echo "ok"
