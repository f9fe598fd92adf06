// SPDX-License-Identifier: BSD-3-Clause
#include "scene.hpp"

#include <algorithm>
#include <cmath>

#include "squall/apps/counter_rng.hpp"

namespace squall::apps::voxels {

namespace {

// x0 + v k folded into [0, range] (a bounce off each wall).
double bounce(double x0, double v, std::int32_t k, double range) {
  double t = std::fmod(x0 + v * k, 2 * range);
  if (t < 0) t += 2 * range;
  return t <= range ? t : 2 * range - t;
}

}  // namespace

Box box_at(const Scene& s, std::int32_t id, std::int32_t k) {
  // A box's draws: its size, start and velocity in each dimension (the particle-init stream,
  // keyed by the box; the same on every node and in the sequential check).
  KeyedRandom r(s.seed, Stream::kParticleInit, static_cast<std::uint64_t>(id));
  Box b;
  b.id = id;
  for (std::size_t d = 0; d < 3; ++d) {
    const double size = 0.02 + 0.06 * r.uniform();
    const double range = 1.0 - size;
    const double x0 = range * r.uniform();
    const double v = 0.02 * (r.uniform() - 0.5);
    b.lo[d] = bounce(x0, v, k, range);
    b.hi[d] = b.lo[d] + size;
  }
  return b;
}

bool overlaps(const Box& a, const Box& b) {
  for (std::size_t d = 0; d < 3; ++d)
    if (!(a.lo[d] < b.hi[d] && b.lo[d] < a.hi[d])) return false;
  return true;
}

std::int32_t voxel_of(double x, std::int32_t voxels) {
  // floor(x v) is monotone in x: a point inside a box is never outside the box's voxels.
  const double f = std::floor(x * voxels);
  if (f < 0) return 0;
  if (f >= voxels) return voxels - 1;
  return static_cast<std::int32_t>(f);
}

void voxel_range(const Box& b, std::int32_t voxels, std::array<std::int32_t, 3>& first,
                 std::array<std::int32_t, 3>& last) {
  for (std::size_t d = 0; d < 3; ++d) {
    first[d] = voxel_of(b.lo[d], voxels);
    last[d] = voxel_of(b.hi[d], voxels);
  }
}

std::array<std::int32_t, 3> owner_voxel(const Box& a, const Box& b, std::int32_t voxels) {
  // The overlap's lowest corner is one of the two boxes' own coordinates (max picks one, no
  // rounding), inside both boxes' voxel ranges.
  std::array<std::int32_t, 3> v{};
  for (std::size_t d = 0; d < 3; ++d) v[d] = voxel_of(std::max(a.lo[d], b.lo[d]), voxels);
  return v;
}

std::vector<Pair> all_pairs(const std::vector<Box>& boxes) {
  std::vector<Pair> pairs;
  for (std::size_t i = 0; i < boxes.size(); ++i)
    for (std::size_t j = i + 1; j < boxes.size(); ++j)
      if (overlaps(boxes[i], boxes[j]))
        pairs.emplace_back(std::min(boxes[i].id, boxes[j].id), std::max(boxes[i].id, boxes[j].id));
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

}  // namespace squall::apps::voxels
