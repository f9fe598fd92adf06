// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/moldyn/forces.hpp"

#include <cmath>

namespace squall::apps::moldyn {

LennardJones::LennardJones(double cutoff) : cutoff_(cutoff), cutoff2_(cutoff * cutoff) {
  const double inverse6 = 1.0 / (cutoff2_ * cutoff2_ * cutoff2_);
  shift_ = 4.0 * inverse6 * (inverse6 - 1.0);
}

double LennardJones::accumulate_forces(std::span<const Pair> pairs, std::span<const Vec3> position,
                                       const Vec3& box, std::span<Vec3> force) const {
  double potential = 0;
  for (const Pair& pair : pairs) {
    const Vec3 d = minimum_image(position[pair.i] - position[pair.j], box);
    const double r2 = norm2(d);
    if (r2 >= cutoff2_) continue;
    const double inverse2 = 1.0 / r2;
    const double inverse6 = inverse2 * inverse2 * inverse2;
    potential += 4.0 * inverse6 * (inverse6 - 1.0) - shift_;
    const Vec3 f = d * (48.0 * inverse2 * inverse6 * (inverse6 - 0.5));
    force[pair.i] += f;
    force[pair.j] -= f;
  }
  return potential;
}

}  // namespace squall::apps::moldyn
