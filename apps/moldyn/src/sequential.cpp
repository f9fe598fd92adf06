// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/moldyn/sequential.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "squall/apps/moldyn/forces.hpp"
#include "squall/apps/moldyn/integrator.hpp"
#include "squall/apps/moldyn/interaction_list.hpp"
#include "squall/apps/options.hpp"

namespace squall::apps::moldyn {

std::size_t default_interactions(std::size_t molecules) {
  return static_cast<std::size_t>(std::llround(1e6 * static_cast<double>(molecules) / 8788.0));
}

double first_list_radius(const MoldynConfig& config, const Molecules& m) {
  const std::size_t target = config.interactions ? config.interactions : default_interactions(m.size());
  const std::size_t all = m.size() * (m.size() - 1) / 2;
  const std::string asked =
      "--cells " + std::to_string(config.lattice.cells[0]) + " (" + std::to_string(m.size()) + " molecules) and " +
      (config.interactions ? "--interactions " + std::to_string(target)
                           : "the default --interactions (" + std::to_string(target) + " pairs for so many molecules)");
  if (target == 0 || target >= all) {
    throw OptionError(asked + ": the molecules have " + std::to_string(all) +
                      " pairs, not more than the target; give a larger --cells or a smaller --interactions");
  }
  double radius = 0;
  try {
    radius = radius_for_pairs(m.position, m.box, target);
  } catch (const std::invalid_argument&) {
    throw OptionError(asked + ": the list radius would exceed half the box; give a larger --cells or a smaller "
                      "--interactions");
  }
  if (radius - config.skin <= 0) {
    throw OptionError(asked + ": the list radius, " + std::to_string(radius) + ", is within the skin (" +
                      std::to_string(config.skin) + "), leaving no force cut-off; give a larger --interactions");
  }
  return radius;
}

std::vector<Pair> build_interaction_list(std::span<const Vec3> position, const Vec3& box,
                                         double radius) {
  std::vector<Pair> pairs;
  append_pairs_within({0, static_cast<std::uint32_t>(position.size())}, position, box,
                      radius * radius, pairs);
  return pairs;
}

MoldynResult run_moldyn(const MoldynConfig& config, PhaseTimer& timer) {
  if (config.rebuild_every < 1) throw std::invalid_argument("moldyn: rebuild_every must be >= 1");
  MoldynResult result;
  Molecules& m = result.molecules;
  {
    auto scope = timer.time("generate");
    m = generate_molecules(config.lattice);
    result.list_radius = first_list_radius(config, m);
  }
  result.cutoff = result.list_radius - config.skin;
  if (result.cutoff <= 0) throw std::invalid_argument("moldyn: the skin exceeds the list radius");
  const LennardJones potential(result.cutoff);

  auto rebuild = [&] {
    auto scope = timer.time("list build");
    result.pairs = build_interaction_list(m.position, m.box, result.list_radius);
    result.list_sizes.push_back(result.pairs.size());
  };
  auto compute_forces = [&] {
    auto scope = timer.time("forces");
    std::fill(m.force.begin(), m.force.end(), Vec3{});
    return potential.accumulate_forces(result.pairs, m.position, m.box, m.force);
  };

  rebuild();
  result.energy.push_back({kinetic_energy(m.velocity), compute_forces()});
  for (int step = 1; step <= config.steps; ++step) {
    {
      auto scope = timer.time("integrate");
      half_kick(m.velocity, m.force, config.dt);
      drift(m.position, m.velocity, m.box, config.dt);
    }
    if (step % config.rebuild_every == 0) rebuild();
    const double potential_energy = compute_forces();
    auto scope = timer.time("integrate");
    half_kick(m.velocity, m.force, config.dt);
    result.energy.push_back({kinetic_energy(m.velocity), potential_energy});
  }
  return result;
}

Checksum checksum_molecules(const Molecules& molecules) {
  Checksum checksum;
  for (std::size_t i = 0; i < molecules.size(); ++i) {
    for (const Vec3* v : {&molecules.position[i], &molecules.velocity[i]}) {
      checksum.add_quantised(v->x, 1e-9);
      checksum.add_quantised(v->y, 1e-9);
      checksum.add_quantised(v->z, 1e-9);
    }
  }
  return checksum;
}

}  // namespace squall::apps::moldyn
