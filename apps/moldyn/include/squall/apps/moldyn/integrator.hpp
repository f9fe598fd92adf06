// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Velocity-Verlet pieces, each a loop over the molecules it is given (unit mass).
#include <span>

#include "squall/apps/vec3.hpp"

namespace squall::apps::moldyn {

// velocity += force * dt / 2
void half_kick(std::span<Vec3> velocity, std::span<const Vec3> force, double dt);
// position += velocity * dt, wrapped back into [0, box)
void drift(std::span<Vec3> position, std::span<const Vec3> velocity, const Vec3& box, double dt);
// Sum of v^2 / 2 in index order.
double kinetic_energy(std::span<const Vec3> velocity);

}  // namespace squall::apps::moldyn
