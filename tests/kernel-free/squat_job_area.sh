#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run by mpirun for each node: before the program starts, make the job-area file a job of
# this namespace once took in /dev/shm (named after the namespace and the host's first node,
# a name another user could guess), owned by another user when this one is root; the job
# must not care. Removes it afterwards and exits with the program's status.
squatted=/dev/shm/squall-$(printf %s "$PMIX_NAMESPACE" | tr -c 'a-zA-Z0-9' _)-0
touch "$squatted" && chmod 600 "$squatted"
[ "$(id -u)" = 0 ] && chown 65534 "$squatted"
"$@"
status=$?
rm -f "$squatted"
exit $status
