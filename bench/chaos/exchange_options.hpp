// SPDX-License-Identifier: BSD-3-Clause
// Command line of the two chaos_exchange programs (each takes the options that concern it).
#pragma once
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "batch_timer.hpp"

namespace squall::bench::chaos_exchange {

struct options {
  bool json = false;
  std::string partition;            // file the Squall run writes, the MPI run reads
  std::uint64_t mesh_nodes = 9428;  // the paper's mesh (Squall run; the MPI run takes the file's)
  std::uint64_t seed = 1;
  batch_plan plan;
};

inline options parse_options(int argc, char** argv, const char* usage) {
  options o;
  auto value = [&](int& i) -> std::string {
    if (i + 1 >= argc) throw std::invalid_argument(std::string(argv[i]) + " needs a value\n" + usage);
    return argv[++i];
  };
  auto count = [&](int& i) -> std::uint64_t {
    const std::string name = argv[i], text = value(i);
    char* end = nullptr;
    const unsigned long long n = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || text[0] == '-' || *end != '\0' || n == 0) {
      throw std::invalid_argument(name + ": expected a positive integer, got '" + text + "'");
    }
    return n;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") o.json = true;
    else if (a == "--partition") o.partition = value(i);
    else if (a == "--mesh-nodes") o.mesh_nodes = count(i);
    else if (a == "--seed") o.seed = count(i);
    else if (a == "--trials") o.plan.trials = static_cast<int>(count(i));
    else if (a == "--reps") o.plan.reps = static_cast<int>(count(i));
    else throw std::invalid_argument("unknown option '" + a + "'\n" + usage);
  }
  return o;
}

}  // namespace squall::bench::chaos_exchange
