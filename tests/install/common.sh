# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the install tests: quiet, and a scratch folder removed when the test ends.

quiet() {  # runs a command, showing its output only if it fails
  local out
  out=$("$@" 2>&1) || { echo "$out"; return 1; }
}

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
