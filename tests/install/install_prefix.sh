#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the build tree ($1) into a fresh prefix ($2) for the install_* tests.
set -euo pipefail
quiet() {  # runs a command, showing its output only if it fails
  local out
  out=$("$@" 2>&1) || { echo "$out"; return 1; }
}
rm -rf "$2"
quiet cmake --install "$1" --prefix "$2"
echo "install_prefix: installed into $2"
