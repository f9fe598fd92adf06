#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs a command on one processor (the first of those this process may use), so that a job it
# starts has more nodes than processors: one_processor.sh SQUALLRUN -n 2 program...
set -eu
cpu=$(awk '/^Cpus_allowed_list/ { print $2 }' /proc/self/status | cut -d, -f1 | cut -d- -f1)
exec taskset -c "$cpu" "$@"
