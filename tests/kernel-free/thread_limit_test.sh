#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A limit of processes and threads (`ulimit -u`, which counts threads) too small for the
# runtime's threads ends the job with a message naming the thread and the limit, at every limit
# tried: never std::terminate's "terminate called after throwing an instance of
# 'std::system_error' ... Resource temporarily unavailable" and an abort. The limit binds only
# users other than root, so the job runs as a user id of its own (setpriv; no other process
# counts toward its limit), from copies of squallrun, the program and libsquall-kf in a folder
# anyone may read (the build folder may be private). Skipped (77) where setpriv or a switch of
# user is not permitted.
# Usage: thread_limit_test.sh SQUALLRUN PROGRAM LIBSQUALL_KF [program args...]
set -euo pipefail
squallrun=$1 program=$2 lib=$3
shift 3
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
  echo "skipped: needs root and setpriv to run as another user"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
cp "$squallrun" "$program" "$dir/"
cp -P "$(dirname "$lib")"/libsquall-kf.so* "$dir/"
uid=61234  # no account: this test's processes alone count toward the limit
as_user() { setpriv --reuid=$uid --regid=$uid --clear-groups "$@"; }
as_user true || { echo "skipped: cannot switch to user id $uid"; exit 77; }
# Waits (up to 10 s) until the last run's processes have ended: they count toward the next limit.
settle() { for _ in $(seq 100); do pgrep -u $uid >/dev/null || return 0; sleep 0.1; done; }

fail() { printf 'FAIL (ulimit -u %s): %s\n%s\n' "$1" "$2" "$3"; exit 1; }
named=0
for limit in 4 6 8 10 12; do
  settle
  status=0
  out=$(as_user env LD_LIBRARY_PATH="$dir" bash -c "ulimit -u $limit; exec timeout 60 '$dir/$(basename "$squallrun")' -n 2 '$dir/$(basename "$program")' $*" 2>&1) || status=$?
  [ "$status" != 124 ] || fail $limit "the job hung" "$out"
  grep -q "terminate called" <<<"$out" && fail $limit "a node ended in std::terminate" "$out"
  [ "$status" != 134 ] || fail $limit "a process aborted" "$out"
  if grep -Eq "cannot start the runtime's thread squall-[a-z-]+: Resource temporarily unavailable \(this user may run $limit processes and threads in all, 'ulimit -u'" <<<"$out"; then
    named=$((named + 1))
    [ "$status" != 0 ] || fail $limit "the job said a thread could not start, and succeeded" "$out"
  fi
done
[ "$named" -gt 0 ] || fail "4-12" "no limit tried ended a node with the thread's message" "$out"
echo "passed ($named of 5 limits ended with the thread's message)"
