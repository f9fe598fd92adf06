#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A /dev/shm too small for the job's rings (Docker's default is 64 MiB; here 2 MiB, in a
# private mount namespace) ends `mpirun -np 2` with Squall's message naming /dev/shm, the
# bytes needed and free and what to do, and a non-zero exit: not with a bare SIGBUS when a
# ring's page is first touched. squallrun's job area is a memfd, which /dev/shm does not
# bound: the same flood runs there. Skipped (77) where unshare or mount is not permitted.
# Usage: small_shm_test.sh SQUALLRUN MPIRUN SCENARIOS (MPIRUN may be "").
set -euo pipefail
squallrun=$1 mpirun=$2 scenarios=$3

if [ "${SMALL_SHM_INSIDE:-}" != 1 ]; then
  if ! unshare -m true 2>/dev/null; then
    echo "skipped: unshare -m is not permitted here (needs root or a user namespace)"
    exit 77
  fi
  SMALL_SHM_INSIDE=1 exec unshare -m --propagation private "$0" "$@"
fi
if ! mount -t tmpfs -o size=2m tmpfs /dev/shm 2>/dev/null; then
  echo "skipped: cannot mount a small tmpfs on /dev/shm"
  exit 77
fi

fail() { printf 'FAIL (%s): %s\n%s\n' "$1" "$2" "$3"; exit 1; }
export SQUALL_RING_BYTES=$((4 << 20))  # 4 rings of 4 MiB for 2 nodes: 16 MiB in a 2 MiB /dev/shm

if [ -n "$mpirun" ]; then
  status=0
  out=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 \
        "$mpirun" -np 2 --oversubscribe --bind-to none "$scenarios" flood 8 2>&1) || status=$?
  [ "$status" != 0 ] || fail mpirun "the job succeeded in a 2 MiB /dev/shm" "$out"
  [ "$status" != 124 ] || fail mpirun "the job hung" "$out"
  grep -q 'Bus error\|signal 7' <<<"$out" && fail mpirun "a node died of SIGBUS" "$out"
  grep -Eq "cannot reserve the job's shared memory: /dev/shm/squall-[0-9]+-[0-9a-f]+ needs 16\.0 MiB \(4 rings of 4\.00 MiB for the 2 nodes on this host\) but /dev/shm has 2\.00 MiB free \(No space left on device\)\. Make room: a larger /dev/shm \(Docker's is 64 MiB: docker run --shm-size=1g\), a smaller SQUALL_RING_BYTES \(squallrun --ring-bytes\), or fewer nodes per host" <<<"$out" ||
    fail mpirun "no message naming /dev/shm" "$out"
  [ -z "$(ls /dev/shm)" ] || fail mpirun "the job area's file was left in /dev/shm" "$(ls -l /dev/shm)"
fi

out=$(timeout 120 "$squallrun" -n 2 "$scenarios" flood 8 2>&1) || fail squallrun "the flood failed (status $?)" "$out"
grep -q '^flooded$' <<<"$out" || fail squallrun "no 'flooded' line" "$out"
echo "passed"
