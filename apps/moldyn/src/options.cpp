// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/moldyn/options.hpp"

#include <string>

namespace squall::apps::moldyn {

MoldynConfig read_moldyn_config(Options& options) {
  MoldynConfig config;
  const int cells = options.count_as<int>("cells", 13);
  if (cells < 1) throw OptionError("--cells: every side needs at least one lattice cell");
  if (cells > kMaxCells) {
    throw OptionError("--cells: " + std::to_string(cells) + " is too large (at most " + std::to_string(kMaxCells) +
                      " cells a side, " + std::to_string(4 * kMaxCells * kMaxCells * kMaxCells) + " molecules)");
  }
  config.lattice.cells = {cells, cells, cells};
  config.lattice.seed = options.count("seed", 1);
  config.interactions = options.count("interactions", 0);
  if (config.interactions > kMaxInteractions) {
    throw OptionError("--interactions: " + std::to_string(config.interactions) + " is too large (at most " +
                      std::to_string(kMaxInteractions) + " pairs)");
  }
  config.steps = options.count_as<int>("steps", 30);
  config.rebuild_every = options.count_as<int>("rebuild-every", 20);
  if (config.rebuild_every < 1) throw OptionError("--rebuild-every must be at least 1");
  return config;
}

}  // namespace squall::apps::moldyn
