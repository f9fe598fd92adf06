// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The interaction list: every pair of molecules closer than the list radius (the force cut-off
// plus a skin, so that the list stays complete between rebuilds).
//
// As in the paper, the list is built by a triangular loop over pairs; the loop is split into
// blocks of molecules so that a parallel version can build the pairs of block p with block q
// (p <= q) wherever it likes. Pairs come out in (i, j) order within each call.
#include <span>
#include <vector>

#include "squall/apps/moldyn/molecules.hpp"

namespace squall::apps::moldyn {

struct IndexRange {
  std::uint32_t begin, end;
};

// Pairs i < j with i, j in `block` and squared periodic distance below `radius2`.
void append_pairs_within(IndexRange block, std::span<const Vec3> position, const Vec3& box,
                         double radius2, std::vector<Pair>& pairs);
// Pairs with i in `first`, j in `second` (first.end <= second.begin) closer than the radius.
void append_pairs_between(IndexRange first, IndexRange second, std::span<const Vec3> position,
                          const Vec3& box, double radius2, std::vector<Pair>& pairs);

// The radius within which exactly `target_pairs` pairs lie (the midpoint between the
// target-th and the next-nearest pair distance). Throws if that radius reaches half the
// shortest side of the box, beyond which periodic images would count twice.
double radius_for_pairs(std::span<const Vec3> position, const Vec3& box, std::size_t target_pairs);

}  // namespace squall::apps::moldyn
