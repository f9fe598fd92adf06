// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The input generator: `initial_per_cell` particles in every cell, placed uniformly in it,
// with free-stream velocities; each cell's draws are keyed by the cell.
#include "squall/apps/dsmc/config.hpp"
#include "squall/apps/dsmc/grid.hpp"
#include "squall/apps/dsmc/particles.hpp"

namespace squall::apps::dsmc {

CellLists generate_initial_gas(const Grid& grid, const DsmcConfig& config);

}  // namespace squall::apps::dsmc
