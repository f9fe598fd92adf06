// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/dsmc/cell_index.hpp"

#include <algorithm>

namespace squall::apps::dsmc {

CellLists build_cell_lists(std::span<const Particle> particles, std::span<const std::int64_t> cell,
                           std::size_t cell_count) {
  CellLists lists;
  lists.start.assign(cell_count + 1, 0);
  for (std::int64_t c : cell) {
    if (c >= 0) ++lists.start[static_cast<std::size_t>(c) + 1];
  }
  for (std::size_t c = 0; c < cell_count; ++c) lists.start[c + 1] += lists.start[c];

  lists.particles.resize(lists.start[cell_count]);
  std::vector<std::uint32_t> next(lists.start.begin(), lists.start.end() - 1);
  for (std::size_t i = 0; i < particles.size(); ++i) {
    if (cell[i] >= 0) lists.particles[next[static_cast<std::size_t>(cell[i])]++] = particles[i];
  }
  for (std::size_t c = 0; c < cell_count; ++c) {
    std::sort(lists.particles.begin() + lists.start[c], lists.particles.begin() + lists.start[c + 1],
              [](const Particle& a, const Particle& b) { return a.id < b.id; });
  }
  return lists;
}

}  // namespace squall::apps::dsmc
