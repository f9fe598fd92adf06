// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/dsmc/initial_gas.hpp"

#include <stdexcept>

#include "squall/apps/counter_rng.hpp"

namespace squall::apps::dsmc {

CellLists generate_initial_gas(const Grid& grid, const DsmcConfig& config) {
  if (config.initial_per_cell >= kMaxParticlesPerSource) {
    throw std::invalid_argument("dsmc: at most 255 initial particles per cell");
  }
  CellLists lists;
  lists.start.push_back(0);
  for (CellId cell = 0; cell < grid.cell_count(); ++cell) {
    const auto [x, y, z] = grid.coordinates(cell);
    KeyedRandom random(config.seed, Stream::kParticleInit, cell);
    for (std::uint32_t n = 0; n < config.initial_per_cell; ++n) {
      Particle p{particle_id(0, cell, n), {}, {}};
      p.position = {x + random.uniform(), y + random.uniform(), z + random.uniform()};
      const GasFlow& gas = config.free_stream;
      p.velocity = {gas.drift + gas.thermal * random.normal(), gas.thermal * random.normal(),
                    gas.thermal * random.normal()};
      lists.particles.push_back(p);
    }
    lists.start.push_back(static_cast<std::uint32_t>(lists.particles.size()));
  }
  return lists;
}

}  // namespace squall::apps::dsmc
