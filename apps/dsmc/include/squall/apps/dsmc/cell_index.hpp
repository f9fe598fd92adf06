// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Index phase: rebuilds the compressed cell-to-particle lists from the particles and the cells
// the move phase gave them (kOutside: dropped), each cell's particles in id order.
#include <cstdint>
#include <span>

#include "squall/apps/dsmc/particles.hpp"

namespace squall::apps::dsmc {

CellLists build_cell_lists(std::span<const Particle> particles, std::span<const std::int64_t> cell,
                           std::size_t cell_count);

}  // namespace squall::apps::dsmc
