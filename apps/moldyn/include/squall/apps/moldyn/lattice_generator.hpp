// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The input: molecules on a face-centred cubic lattice (four per lattice cell) filling a
// periodic cuboid, displaced slightly from their sites as in a thermalised crystal, with
// Maxwellian velocities of zero net momentum. The paper's input is 13x13x13 cells: 8,788
// molecules.
#include <array>
#include <cstdint>

#include "squall/apps/moldyn/molecules.hpp"

namespace squall::apps::moldyn {

struct LatticeConfig {
  std::array<int, 3> cells{13, 13, 13};
  double density = 0.8442;      // molecules per unit volume
  double temperature = 0.72;    // sets the Maxwellian's variance
  double displacement = 0.06;   // standard deviation of each coordinate's offset from its site
  std::uint64_t seed = 1;
};

Molecules generate_molecules(const LatticeConfig& config);

}  // namespace squall::apps::moldyn
