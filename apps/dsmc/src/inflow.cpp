// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/dsmc/inflow.hpp"

#include <algorithm>

#include "squall/apps/counter_rng.hpp"

namespace squall::apps::dsmc {

std::vector<InflowSource> inflow_sources(const Grid& grid, const DsmcConfig& config) {
  std::vector<InflowSource> sources;
  const auto& n = grid.cells;
  const double jet_radius = config.jet_radius * std::min(n[1], n[2]);
  for (int axis = 0; axis < 3; ++axis) {
    const int u = (axis + 1) % 3, v = (axis + 2) % 3;
    for (int side : {-1, n[axis]}) {
      for (int b = 0; b < n[v]; ++b) {
        for (int a = 0; a < n[u]; ++a) {
          std::array<int, 3> corner{};
          corner[axis] = side;
          corner[u] = a;
          corner[v] = b;
          const double dy = corner[1] + 0.5 - 0.5 * n[1], dz = corner[2] + 0.5 - 0.5 * n[2];
          const bool jet = axis == 0 && side == -1 && dy * dy + dz * dz < jet_radius * jet_radius;
          sources.push_back({static_cast<std::uint32_t>(sources.size()), corner, axis, jet});
        }
      }
    }
  }
  return sources;
}

void generate_inflow(std::span<const InflowSource> sources, std::uint32_t step, const Grid& grid,
                     const DsmcConfig& config, std::vector<Particle>& entering) {
  for (const InflowSource& source : sources) {
    const GasFlow& gas = source.jet ? config.jet : config.free_stream;
    KeyedRandom random(config.seed, Stream::kInflow, source.index, step);
    const std::uint32_t count = random.poisson(gas.density, kMaxParticlesPerSource - 1);
    const int a = source.axis;
    for (std::uint32_t k = 0; k < count; ++k) {
      const double across = source.corner[a] + random.uniform();
      const double velocity = (a == 0 ? gas.drift : 0.0) + gas.thermal * random.normal();
      const double arrives = across + velocity;
      if (!(arrives >= 0 && arrives < grid.cells[a])) continue;
      double position[3], speed[3];
      for (int b = 0; b < 3; ++b) {
        position[b] = b == a ? across : source.corner[b] + random.uniform();
        speed[b] = b == a ? velocity : (b == 0 ? gas.drift : 0.0) + gas.thermal * random.normal();
      }
      Particle p{particle_id(step, source.index, k), {position[0], position[1], position[2]},
                 {speed[0], speed[1], speed[2]}};
      p.position += p.velocity;
      if (grid.cell_of(p.position) != kOutside) entering.push_back(p);
    }
  }
}

}  // namespace squall::apps::dsmc
