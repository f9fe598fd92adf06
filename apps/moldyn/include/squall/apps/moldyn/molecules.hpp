// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Molecules in a periodic cuboid (reduced Lennard-Jones units: sigma = epsilon = mass = 1),
// and the interaction list's entries.
#include <cmath>
#include <compare>
#include <cstdint>
#include <vector>

#include "squall/apps/vec3.hpp"

namespace squall::apps::moldyn {

struct Molecules {
  std::vector<Vec3> position;  // in [0, box) on every axis
  std::vector<Vec3> velocity;
  std::vector<Vec3> force;
  Vec3 box;

  std::size_t size() const { return position.size(); }
};

// An interacting pair of molecules, i < j.
struct Pair {
  std::uint32_t i, j;
  friend auto operator<=>(const Pair&, const Pair&) = default;  // ordered by i, then j
};

// The shortest periodic image of a separation.
inline Vec3 minimum_image(Vec3 d, const Vec3& box) {
  d.x -= box.x * std::round(d.x / box.x);
  d.y -= box.y * std::round(d.y / box.y);
  d.z -= box.z * std::round(d.z / box.z);
  return d;
}

}  // namespace squall::apps::moldyn
