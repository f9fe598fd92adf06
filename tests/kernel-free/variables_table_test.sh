#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Every SQUALL_* environment variable that Squall's sources read is in the table of
# kernel-free/src/common/variables.cpp: a name missing there draws the "unused environment
# variable" warning although it is read, and SQUALL_SHOW_CONFIG leaves it out. A read is
# getenv("SQUALL_X") or one of the env_* helpers in C and C++, os.environ in Python, and
# $SQUALL_X or ${SQUALL_X...} in shell scripts (files whose first line names sh or bash; in
# CMake files ${SQUALL_X} is a CMake variable). Usage: variables_table_test.sh SOURCE_DIR
set -euo pipefail
cd "$1"
dirs=(kernel-free libtsm libxsm chaos libarrays apps examples bench scripts cmake tests .ci)

read_in_code() {
  grep -rhoE --exclude="${0##*/}" '(getenv|env_[a-z_]+|int_env|from_name|environ\.get|environ\.pop)\(\s*"SQUALL_[A-Z0-9_]+"|environ\["SQUALL_[A-Z0-9_]+"\]' \
    "${dirs[@]}" 2>/dev/null | grep -oE 'SQUALL_[A-Z0-9_]+' || true
}
read_in_shell() {
  local f
  grep -rlE --exclude="${0##*/}" '^#!.*\b(sh|bash)\b' "${dirs[@]}" 2>/dev/null | while read -r f; do
    head -n 1 "$f" | grep -qE '^#!.*\b(sh|bash)\b' || continue
    grep -oE '\$\{?SQUALL_[A-Z0-9_]+' "$f" | grep -oE 'SQUALL_[A-Z0-9_]+' || true
  done
}
in_table() {
  grep -oE '^ *\{"SQUALL_[A-Z0-9_]+",' kernel-free/src/common/variables.cpp | grep -oE 'SQUALL_[A-Z0-9_]+'
}

read_names=$( { read_in_code; read_in_shell; } | sort -u)
table_names=$(in_table | sort -u)
[ "$(wc -l <<<"$read_names")" -ge 30 ] || { printf 'FAIL: found only these reads, is the search broken?\n%s\n' "$read_names"; exit 1; }
missing=$(comm -23 <(echo "$read_names") <(echo "$table_names"))
if [ -n "$missing" ]; then
  printf 'FAIL: read but not in the table of kernel-free/src/common/variables.cpp:\n%s\n' "$missing"
  exit 1
fi
echo "passed: $(wc -l <<<"$read_names") variables read, all in the table"
