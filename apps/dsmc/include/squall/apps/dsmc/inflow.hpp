// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Particles entering through the sides. Outside each face of the box lies one layer of source
// cells holding gas of the free stream (or of the jet, in a disc in the middle of the x = 0
// face): each step a source cell holds a Poisson number of particles placed uniformly in it,
// which move one step; those that land in the box enter it (a particle that cannot cross the
// face draws no more than its position and velocity along the face's normal). This gives the right flux and
// velocity distribution for gas crossing at most one cell per step. A source's draws are keyed
// by (source, step), so sources can be processed anywhere, in any order.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "squall/apps/dsmc/config.hpp"
#include "squall/apps/dsmc/grid.hpp"
#include "squall/apps/dsmc/particles.hpp"

namespace squall::apps::dsmc {

struct InflowSource {
  std::uint32_t index;        // names the source in particle ids and random keys
  std::array<int, 3> corner;  // a cell outside the box
  int axis;                   // the box face it lies against is normal to this axis
  bool jet;
};

std::vector<InflowSource> inflow_sources(const Grid& grid, const DsmcConfig& config);

// Appends the particles entering during `step` from `sources`, already at their new positions.
void generate_inflow(std::span<const InflowSource> sources, std::uint32_t step, const Grid& grid,
                     const DsmcConfig& config, std::vector<Particle>& entering);

}  // namespace squall::apps::dsmc
