// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/dsmc/options.hpp"

#include <limits>
#include <string>

namespace squall::apps::dsmc {

DsmcConfig read_dsmc_config(Options& options) {
  DsmcConfig config;
  const auto cells = options.counts("cells", {30, 18, 18}, std::numeric_limits<int>::max());
  std::uint64_t total = 1;
  for (int a = 0; a < 3; ++a) {
    if (cells[a] < 1) throw OptionError("--cells: every side needs at least one cell");
    config.cells[a] = static_cast<int>(cells[a]);
    total = total > kMaxCells ? total : total * cells[a];  // stops growing once past the bound
  }
  const std::string grid = std::to_string(cells[0]) + " " + std::to_string(cells[1]) + " " + std::to_string(cells[2]);
  if (total > kMaxCells) {
    throw OptionError("--cells: " + grid + " is too large (at most " + std::to_string(kMaxCells) + " cells)");
  }
  config.initial_per_cell = options.count_as<std::uint32_t>("per-cell", 5);
  if (total * config.initial_per_cell > kMaxInitialParticles) {
    throw OptionError("--per-cell: " + std::to_string(config.initial_per_cell) + " in " + std::to_string(total) +
                      " cells is too many (at most " + std::to_string(kMaxInitialParticles) + " particles to start)");
  }
  config.steps = options.count_as<int>("steps", 400);
  config.seed = options.count("seed", 1);
  return config;
}

}  // namespace squall::apps::dsmc
