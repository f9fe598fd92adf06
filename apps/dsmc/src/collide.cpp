// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/dsmc/collide.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "squall/apps/counter_rng.hpp"

namespace squall::apps::dsmc {

std::size_t collide_cell(CellId cell, std::uint32_t step, std::span<Particle> particles,
                         double collision_speed, std::uint64_t seed) {
  const auto n = static_cast<std::uint32_t>(particles.size());
  if (n < 2) return 0;
  KeyedRandom random(seed, Stream::kCollision, cell, step);
  std::size_t collisions = 0;
  for (std::uint32_t candidate = 0; candidate < n / 2; ++candidate) {
    const std::uint32_t i = random.below(n);
    std::uint32_t j = random.below(n - 1);
    if (j >= i) ++j;
    Vec3& vi = particles[i].velocity;
    Vec3& vj = particles[j].velocity;
    const double speed = std::sqrt(norm2(vi - vj));
    const double accept = random.uniform();
    const double cos_theta = 2.0 * random.uniform() - 1.0;
    const double phi = 2.0 * std::numbers::pi * random.uniform();
    if (accept * collision_speed >= speed) continue;
    const double sin_theta = std::sqrt(std::max(0.0, 1.0 - cos_theta * cos_theta));
    const Vec3 centre = (vi + vj) * 0.5;
    const Vec3 half = Vec3{sin_theta * std::cos(phi), sin_theta * std::sin(phi), cos_theta} * (0.5 * speed);
    vi = centre + half;
    vj = centre - half;
    ++collisions;
  }
  return collisions;
}

}  // namespace squall::apps::dsmc
