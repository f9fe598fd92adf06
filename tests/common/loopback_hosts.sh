#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs one job over simulated hosts on this machine: HOSTS squallruns, host k listening on
# 127.0.0.(k+1) (every 127/8 address is this machine's loopback) with NODES nodes each; the
# nodes of a host share memory and the hosts talk over TCP, as on a cluster. No root needed
# (kf_hosts_test's network namespaces, which do, cover cut links and lost hosts).
#
#   loopback_hosts.sh SQUALLRUN HOSTS NODES PORT_BASE program [args...]
#
# PORT_BASE: node i listens on PORT_BASE + i (give tests that may run at once different
# bases). Exits 0 when every host's squallrun did, else with the first failure's status.
set -u
if [ $# -lt 5 ]; then
  echo "usage: $0 SQUALLRUN HOSTS NODES PORT_BASE program [args...]" >&2
  exit 2
fi
squallrun=$1 hosts=$2 nodes=$3 port_base=$4
shift 4
list=""
for ((k = 0; k < hosts; ++k)); do list+="${list:+,}127.0.0.$((k + 1))"; done
SQUALL_JOB_SECRET=$("$squallrun" --make-secret) || exit 2
export SQUALL_JOB_SECRET SQUALL_TCP_PORT=$port_base SQUALL_TEST_NODES=$((hosts * nodes))
# The hosts share this machine's processors, which no node sees: with more nodes in all than
# processors, they are told so, as the nodes of one host would find for themselves.
if [ $((hosts * nodes)) -gt "$(nproc)" ] && [ -z "${SQUALL_OVERSUBSCRIBED:-}" ]; then
  export SQUALL_OVERSUBSCRIBED=1
fi
pids=()
for ((k = 0; k < hosts; ++k)); do
  # Each host's lines are labelled with its index, as a cluster launcher would.
  (set -o pipefail; "$squallrun" -n "$nodes" --hosts "$list" --host-index "$k" "$@" 2>&1 | sed -u "s/^/[host $k] /") &
  pids+=($!)
done
status=0
for k in "${!pids[@]}"; do
  wait "${pids[$k]}"
  s=$?
  if [ $s -ne 0 ]; then
    echo "loopback_hosts: host $k exited with status $s" >&2
    if [ $status -eq 0 ]; then status=$s; fi
  fi
done
exit $status
