// SPDX-License-Identifier: BSD-3-Clause
// Every SQUALL_* environment variable any part of Squall reads - the runtime, libtsm and
// PARMACS, squallrun, and the scripts and tests - in one table, so that a node can warn of
// a name nothing reads (a misspelt setting would otherwise be ignored without a word) and
// print the settings in force (SQUALL_SHOW_CONFIG). The layers above name their variables
// here rather than register them: squallrun's and libtsm's are set in the nodes' environment
// whether or not the program links libtsm, and must not be taken for misspellings.
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace squall::config {

enum class reader {
  runtime,    // this library, in every node
  libtsm,     // libtsm and its PARMACS layer, in programs that use them
  libarrays,  // libarrays, in programs that use it
  squallrun,  // the launcher, before it starts the nodes
  job,        // set by the launcher for its nodes; not a setting
  scripts,    // scripts/, tests/, bench/ and the squall-parmacs-cc wrapper only
};

struct variable {
  const char* name;
  reader read_by;
  const char* fallback;  // the default, as the README states it
};

std::span<const variable> known_variables();
const variable* find_variable(std::string_view name);

// The SQUALL_* names in `environment` (NAME=value strings) that no part of Squall reads,
// each with the closest known name when one is near enough to be a likely misspelling
// ("" otherwise).
struct unknown_variable {
  std::string name, closest;
};
std::vector<unknown_variable> unknown_variables(char** environment);

}  // namespace squall::config
