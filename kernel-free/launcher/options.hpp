// SPDX-License-Identifier: BSD-3-Clause
// squallrun's command line and the settings it reads from the environment.
#pragma once
#include <cstdint>

namespace squallrun {

struct options {
  int nodes = 0;       // on this host
  int job_nodes = 0;   // on every host
  int first_node = 0;  // this host's first
  std::int64_t ring_bytes = 0;
  std::int64_t grace_s = 0;
  bool label = false;  // prefix each line a node prints with "[K] "
  char** program = nullptr;
};

// Reads the options (GNU forms: -n4, -n 4, --nodes=4, --nodes 4, -- ends them) up to the
// program's name; what follows it is the program's own. A bad option ends squallrun with
// status 2 and a message naming it.
options parse(int argc, char** argv);

[[noreturn]] void die(const char* fmt, const char* arg = "");

}  // namespace squallrun
