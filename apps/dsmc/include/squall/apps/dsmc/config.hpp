// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The DSMC input: a box of cells immersed in a free stream flowing along +x, with a denser and
// faster jet entering through the middle of the x = 0 face. Velocities are in cells per step.
#include <array>
#include <cstdint>

#include "squall/apps/vec3.hpp"

namespace squall::apps::dsmc {

struct GasFlow {
  double density;  // particles per cell volume
  double drift;    // mean velocity along +x
  double thermal;  // standard deviation of each velocity component
};

struct DsmcConfig {
  // The paper's 9,720 cells, with 5 particles per cell to start (48,600).
  std::array<int, 3> cells{30, 18, 18};
  std::uint32_t initial_per_cell = 5;
  GasFlow free_stream{7.0, 0.3, 0.1};
  GasFlow jet{12.0, 0.45, 0.1};
  double jet_radius = 0.25;  // as a fraction of the smaller side of the x = 0 face
  // A candidate pair collides with probability |relative velocity| / this (capped at 1).
  double collision_speed = 0.5;
  int steps = 400;
  std::uint64_t seed = 1;
};

}  // namespace squall::apps::dsmc
