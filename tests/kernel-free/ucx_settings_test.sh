#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The settings Squall gives UCX for its TCP lane (keepalive, ucx_setup.cpp) go only to jobs
# whose UCX_TLS lets UCX use TCP: on its shared-memory lane alone, UCX used to warn at every
# start of "unused env variables: UCX_TCP_KEEPIDLE,..." that the user never set. A variable the
# user did set and UCX does not use is still warned of. 2 nodes of this host over UCX.
# Usage: ucx_settings_test.sh SQUALLRUN PROGRAM
set -uo pipefail
squallrun=$1 program=$2
status=0
run() {  # what, then the environment's assignments
  local what=$1
  shift
  out=$(env "$@" timeout 60 "$squallrun" -n 2 --transport ucx "$program" stats 2>&1)
  code=$?
  if [ $code -ne 0 ]; then
    printf 'FAIL (%s): exit %d, output:\n%s\n' "$what" $code "$out"
    status=1
    return 1
  fi
}
for tls in sm tcp "^sm" "^tcp" "sm,tcp"; do
  run "UCX_TLS=$tls" UCX_TLS="$tls" || continue
  if grep -q 'unused env variable' <<<"$out"; then
    printf 'FAIL (UCX_TLS=%s): UCX warned of unused variables:\n%s\n' "$tls" "$out"
    status=1
  else
    echo "ok: UCX_TLS=$tls, no warning"
  fi
done
if run "the user's own" UCX_TLS=sm UCX_TCP_KEEPIDLE=5s; then
  if grep -q 'unused env variable: UCX_TCP_KEEPIDLE (set' <<<"$out"; then
    echo "ok: the user's own unused UCX_TCP_KEEPIDLE is warned of, alone"
  else
    printf 'FAIL: no warning, or more than the user set, of UCX_TCP_KEEPIDLE with UCX_TLS=sm:\n%s\n' "$out"
    status=1
  fi
fi
exit $status
