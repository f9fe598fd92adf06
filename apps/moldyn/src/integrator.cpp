// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/moldyn/integrator.hpp"

#include <cmath>

namespace squall::apps::moldyn {
namespace {

// Into [0, length): floor can round a tiny negative x up to exactly `length`.
double wrap(double x, double length) {
  const double wrapped = x - length * std::floor(x / length);
  return wrapped < length ? wrapped : 0.0;
}

}  // namespace

void half_kick(std::span<Vec3> velocity, std::span<const Vec3> force, double dt) {
  for (std::size_t m = 0; m < velocity.size(); ++m) velocity[m] += force[m] * (0.5 * dt);
}

void drift(std::span<Vec3> position, std::span<const Vec3> velocity, const Vec3& box, double dt) {
  for (std::size_t m = 0; m < position.size(); ++m) {
    const Vec3 moved = position[m] + velocity[m] * dt;
    position[m] = {wrap(moved.x, box.x), wrap(moved.y, box.y), wrap(moved.z, box.z)};
  }
}

double kinetic_energy(std::span<const Vec3> velocity) {
  double sum = 0;
  for (const Vec3& v : velocity) sum += norm2(v);
  return 0.5 * sum;
}

}  // namespace squall::apps::moldyn
