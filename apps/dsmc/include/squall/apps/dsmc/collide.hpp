// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Collision phase, one cell at a time: floor(n/2) candidate pairs drawn at random among the
// cell's n particles, each colliding with probability |relative velocity| / collision_speed
// (hard-sphere-like). A collision keeps the pair's centre-of-mass velocity and the size of
// their relative velocity and turns it to a random direction, so momentum and energy are
// conserved. The draws are keyed by (cell, step) and the particles must be in id order, so any
// node colliding this cell gets the same result.
#include <cstdint>
#include <span>

#include "squall/apps/dsmc/grid.hpp"
#include "squall/apps/dsmc/particles.hpp"

namespace squall::apps::dsmc {

// Returns the number of collisions.
std::size_t collide_cell(CellId cell, std::uint32_t step, std::span<Particle> particles,
                         double collision_speed, std::uint64_t seed);

}  // namespace squall::apps::dsmc
