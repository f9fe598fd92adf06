// SPDX-License-Identifier: BSD-3-Clause
// Whether the program can be started, checked once by the launcher before any node starts,
// so that a missing program is one message rather than one per node.
#pragma once
#include <optional>
#include <string>

namespace squallrun {

struct cannot_run {
  std::string reason;  // "No such file or directory", "not found in PATH", ...
  int status;          // the shell's: 127 not found, 126 found but not executable
};

// Finds `program` as execvp would: the path itself when it has a slash, else the first
// executable file of that name in PATH's directories.
std::optional<cannot_run> check_program(const std::string& program);

}  // namespace squallrun
