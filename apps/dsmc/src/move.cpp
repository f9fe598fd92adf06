// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/dsmc/move.hpp"

namespace squall::apps::dsmc {

MoveCounts move_particles(const Grid& grid, std::span<Particle> particles,
                          std::span<std::int64_t> new_cell) {
  MoveCounts counts;
  for (std::size_t i = 0; i < particles.size(); ++i) {
    const std::int64_t from = grid.cell_of(particles[i].position);
    particles[i].position += particles[i].velocity;
    const std::int64_t to = grid.cell_of(particles[i].position);
    new_cell[i] = to;
    if (to == kOutside) {
      ++counts.left;
    } else if (to != from) {
      ++counts.changed_cell;
      const auto a = grid.coordinates(static_cast<CellId>(from));
      const auto b = grid.coordinates(static_cast<CellId>(to));
      counts.along_x += a[1] == b[1] && a[2] == b[2];
    }
  }
  return counts;
}

}  // namespace squall::apps::dsmc
