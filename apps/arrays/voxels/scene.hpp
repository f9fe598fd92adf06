// SPDX-License-Identifier: BSD-3-Clause
// The voxel collision problem both versions solve: n axis-aligned boxes moving in the unit
// cube, bouncing off its walls; at each step, which pairs of boxes overlap.
//
// A box's place at step k is a pure function of its number, the seed and k, so any node can
// compute it. Space is cut into v x v x v voxels. A box belongs to every voxel its bounding
// box meets (voxel_range); two boxes that overlap share the voxel holding the lowest corner of
// their overlap (owner_voxel), and only that voxel reports them, so each pair is found once.
// Both functions use the same floating-point operations as overlaps(), so the voxel version
// finds exactly the pairs of the O(n^2) check.
#pragma once
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace squall::apps::voxels {

struct Box {
  std::int32_t id = 0;
  std::array<double, 3> lo{}, hi{};
  template <class A>
  void serialize(A& ar) {
    ar(id, lo, hi);
  }
};

struct Scene {
  std::int32_t objects = 2000;
  std::int32_t voxels = 10;  // per side
  std::uint64_t seed = 1;
};

// Box `id` at step k.
Box box_at(const Scene& s, std::int32_t id, std::int32_t k);
// The boxes' interiors meet (touching faces do not count).
bool overlaps(const Box& a, const Box& b);

// Voxel coordinates of a point's coordinate x (clamped to the cube).
std::int32_t voxel_of(double x, std::int32_t voxels);
// The voxels box b meets: [first[d], last[d]] in each dimension d.
void voxel_range(const Box& b, std::int32_t voxels, std::array<std::int32_t, 3>& first,
                 std::array<std::int32_t, 3>& last);
// The voxel that reports an overlapping pair: the one holding the overlap's lowest corner.
std::array<std::int32_t, 3> owner_voxel(const Box& a, const Box& b, std::int32_t voxels);

using Pair = std::pair<std::int32_t, std::int32_t>;  // (lower id, higher id)
// The O(n^2) check: every overlapping pair at step k, sorted.
std::vector<Pair> all_pairs(const std::vector<Box>& boxes);

}  // namespace squall::apps::voxels
