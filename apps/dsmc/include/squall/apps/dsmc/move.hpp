// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Move phase: each particle advances one step in a straight line; its new cell is recorded
// for the index phase, or kOutside when it has left the box through a side.
#include <cstdint>
#include <span>

#include "squall/apps/dsmc/grid.hpp"
#include "squall/apps/dsmc/particles.hpp"

namespace squall::apps::dsmc {

struct MoveCounts {
  std::size_t changed_cell = 0;  // stayed in the box, in another cell
  std::size_t along_x = 0;       // of those, only the x index changed
  std::size_t left = 0;          // left the box

  MoveCounts& operator+=(const MoveCounts& o) {
    changed_cell += o.changed_cell;
    along_x += o.along_x;
    left += o.left;
    return *this;
  }
};

MoveCounts move_particles(const Grid& grid, std::span<Particle> particles,
                          std::span<std::int64_t> new_cell);

}  // namespace squall::apps::dsmc
