// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The sequential reference: velocity-Verlet steps with the interaction list rebuilt every
// `rebuild_every` steps (at step 0, 20, ...: twice in the paper's 30 steps).
#include <span>
#include <vector>

#include "squall/apps/checksum.hpp"
#include "squall/apps/moldyn/lattice_generator.hpp"
#include "squall/apps/phase_timer.hpp"

namespace squall::apps::moldyn {

struct MoldynConfig {
  LatticeConfig lattice;
  std::size_t interactions = 0;  // pairs in the first list; 0 for the paper's 10^6 per 8,788
  double skin = 0.4;             // list radius minus force cut-off
  double dt = 0.005;
  int steps = 30;
  int rebuild_every = 20;
};

struct Energy {
  double kinetic, potential;
  double total() const { return kinetic + potential; }
};

struct MoldynResult {
  Molecules molecules;
  std::vector<Pair> pairs;               // the list in use at the end
  double list_radius = 0, cutoff = 0;
  std::vector<std::size_t> list_sizes;   // one per build
  std::vector<Energy> energy;            // [0] before the first step, [s] after step s
};

// The paper's density of interactions: 10^6 pairs for 8,788 molecules.
std::size_t default_interactions(std::size_t molecules);

// The first interaction list's radius for config's molecules `m` (radius_for_pairs on
// --interactions, or default_interactions), checked to leave a positive force cut-off. A target
// the molecules cannot meet (as many pairs as they have, a radius beyond half the box, one
// within the skin) is an OptionError naming --cells and --interactions: every program ended
// with status 1 and radius_for_pairs' words, once a node. Every program computes it alike.
double first_list_radius(const MoldynConfig& config, const Molecules& m);

std::vector<Pair> build_interaction_list(std::span<const Vec3> position, const Vec3& box,
                                         double radius);

// Phases timed: "generate", "list build", "forces", "integrate".
MoldynResult run_moldyn(const MoldynConfig& config, PhaseTimer& timer);

// Positions and velocities in molecule order, quantised to 1e-9.
Checksum checksum_molecules(const Molecules& molecules);

}  // namespace squall::apps::moldyn
