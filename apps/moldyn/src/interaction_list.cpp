// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/moldyn/interaction_list.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace squall::apps::moldyn {

void append_pairs_within(IndexRange block, std::span<const Vec3> position, const Vec3& box,
                         double radius2, std::vector<Pair>& pairs) {
  for (std::uint32_t i = block.begin; i < block.end; ++i) {
    for (std::uint32_t j = i + 1; j < block.end; ++j) {
      if (norm2(minimum_image(position[i] - position[j], box)) < radius2) pairs.push_back({i, j});
    }
  }
}

void append_pairs_between(IndexRange first, IndexRange second, std::span<const Vec3> position,
                          const Vec3& box, double radius2, std::vector<Pair>& pairs) {
  for (std::uint32_t i = first.begin; i < first.end; ++i) {
    for (std::uint32_t j = second.begin; j < second.end; ++j) {
      if (norm2(minimum_image(position[i] - position[j], box)) < radius2) pairs.push_back({i, j});
    }
  }
}

double radius_for_pairs(std::span<const Vec3> position, const Vec3& box, std::size_t target_pairs) {
  const double count = static_cast<double>(position.size());
  if (target_pairs == 0 || target_pairs >= position.size() * (position.size() - 1) / 2) {
    throw std::invalid_argument("moldyn: the interaction target must be between 1 and all pairs");
  }
  // Start from the radius a uniform gas of this density would need, and widen until the
  // candidates hold more than the target.
  const double density = count / (box.x * box.y * box.z);
  double guess = 1.1 * std::cbrt(6.0 * static_cast<double>(target_pairs) / (4.0 * std::numbers::pi * density * count));
  const double limit = 0.5 * std::min({box.x, box.y, box.z});
  std::vector<double> distance2;
  for (;;) {
    distance2.clear();
    const double guess2 = guess * guess;
    for (std::size_t i = 0; i < position.size(); ++i) {
      for (std::size_t j = i + 1; j < position.size(); ++j) {
        const double d2 = norm2(minimum_image(position[i] - position[j], box));
        if (d2 < guess2) distance2.push_back(d2);
      }
    }
    if (distance2.size() > target_pairs || guess >= limit) break;
    guess *= 1.1;
  }
  if (distance2.size() <= target_pairs) {
    throw std::invalid_argument("moldyn: the box is too small for the interaction target "
                                "(the list radius would exceed half the box)");
  }
  std::nth_element(distance2.begin(), distance2.begin() + target_pairs, distance2.end());
  const double above = distance2[target_pairs];
  const double below = *std::max_element(distance2.begin(), distance2.begin() + target_pairs);
  const double radius = std::sqrt(0.5 * (below + above));
  if (radius >= limit) {
    throw std::invalid_argument("moldyn: the box is too small for the interaction target "
                                "(the list radius would exceed half the box)");
  }
  return radius;
}

}  // namespace squall::apps::moldyn
