// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/moldyn/lattice_generator.hpp"

#include <cmath>
#include <stdexcept>

#include "squall/apps/counter_rng.hpp"

namespace squall::apps::moldyn {

Molecules generate_molecules(const LatticeConfig& config) {
  for (int cells : config.cells) {
    if (cells < 1) throw std::invalid_argument("moldyn: every side needs at least one lattice cell");
  }
  const double spacing = std::cbrt(4.0 / config.density);
  const Vec3 sites[4] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
  Molecules molecules;
  molecules.box = {config.cells[0] * spacing, config.cells[1] * spacing, config.cells[2] * spacing};
  for (int z = 0; z < config.cells[2]; ++z) {
    for (int y = 0; y < config.cells[1]; ++y) {
      for (int x = 0; x < config.cells[0]; ++x) {
        for (const Vec3& site : sites) {
          const std::uint64_t id = molecules.position.size();
          KeyedRandom jitter(config.seed, Stream::kMoleculeJitter, id);
          Vec3 at = (Vec3{double(x), double(y), double(z)} + site) * spacing;
          at += Vec3{jitter.normal(), jitter.normal(), jitter.normal()} * config.displacement;
          // Wrap into [0, box): a displaced molecule may leave the cuboid at the low faces.
          at.x -= molecules.box.x * std::floor(at.x / molecules.box.x);
          at.y -= molecules.box.y * std::floor(at.y / molecules.box.y);
          at.z -= molecules.box.z * std::floor(at.z / molecules.box.z);
          molecules.position.push_back(at);

          KeyedRandom thermal(config.seed, Stream::kMoleculeVelocity, id);
          const double speed = std::sqrt(config.temperature);
          molecules.velocity.push_back(Vec3{thermal.normal(), thermal.normal(), thermal.normal()} * speed);
        }
      }
    }
  }
  Vec3 drift;
  for (const Vec3& v : molecules.velocity) drift += v;
  drift *= 1.0 / static_cast<double>(molecules.size());
  for (Vec3& v : molecules.velocity) v -= drift;
  molecules.force.assign(molecules.size(), Vec3{});
  return molecules;
}

}  // namespace squall::apps::moldyn
