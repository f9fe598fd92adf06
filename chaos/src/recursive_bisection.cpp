// SPDX-License-Identifier: BSD-3-Clause
// Recursive bisection over the gathered points, shared by rcb and rib (which differ only in
// the key a group is ordered by).
//
// Known simplification against CHAOS's parallel RCB: every node gathers all the points and
// computes the same bisection (memory O(N) per node, time O(N log N log parts) on each).
// Determinism comes from ordering by (key, element identity) with the same arithmetic on
// every node.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "partition_support.hpp"

namespace squall::chaos::detail {
namespace {

struct group {
  index begin, end;  // range of the element order
  int first_part, parts;
};

// Elements parts [first, first + count) get when N elements are spread over `parts` parts as
// evenly as possible (the first N % parts parts one more).
index elements_for(index n, int parts, int first, int count) {
  const index base = n / parts, extra = n % parts;
  const index with_extra = std::clamp<index>(extra - first, 0, count);
  return base * count + with_extra;
}

// Where to cut a group sorted by key, weighted: the prefix whose weight is closest to the
// first parts' share (ties to the shorter prefix), leaving every part at least one element.
index weighted_cut(const gathered_points& points, std::span<const std::pair<double, index>> sorted, const group& g) {
  const int left_parts = g.parts / 2, right_parts = g.parts - left_parts;
  double total = 0;
  for (const auto& [k, e] : sorted) total += points.weights[static_cast<std::size_t>(e)];
  const double target = total * left_parts / g.parts;
  const auto size = static_cast<index>(sorted.size());
  double prefix = 0;
  index c = 0;
  for (; c < left_parts; ++c) prefix += points.weights[static_cast<std::size_t>(sorted[c].second)];
  index best = c;
  double best_miss = std::abs(prefix - target);
  for (; c < size - right_parts; ++c) {
    prefix += points.weights[static_cast<std::size_t>(sorted[c].second)];
    const double miss = std::abs(prefix - target);
    if (miss < best_miss) {
      best = c + 1;
      best_miss = miss;
    }
    if (prefix > target) break;  // later prefixes only weigh more
  }
  return best;
}

}  // namespace

std::vector<int> recursive_bisection(const gathered_points& points, const bisection_key& key) {
  const index n = points.size();
  const bool weighted = !points.weights.empty();
  std::vector<int> part(static_cast<std::size_t>(n), 0);
  std::vector<index> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), index{0});

  std::vector<group> todo{{0, n, 0, points.parts}};
  std::vector<double> keys;
  std::vector<std::pair<double, index>> keyed;  // (key, element): the order is total
  while (!todo.empty()) {
    const group g = todo.back();
    todo.pop_back();
    if (g.parts == 1) {
      for (index i = g.begin; i < g.end; ++i) part[static_cast<std::size_t>(order[i])] = g.first_part;
      continue;
    }
    const std::span<const index> members(order.data() + g.begin, static_cast<std::size_t>(g.end - g.begin));
    keys.resize(members.size());
    key(points, members, keys);
    keyed.resize(members.size());
    for (std::size_t i = 0; i < members.size(); ++i) keyed[i] = {keys[i], members[i]};

    const int left_parts = g.parts / 2;
    index cut;
    if (weighted) {
      std::sort(keyed.begin(), keyed.end());
      cut = weighted_cut(points, keyed, g);
    } else {
      // Each group holds exactly its parts' share, so the cut gives each side its own.
      cut = elements_for(n, points.parts, g.first_part, left_parts);
      std::nth_element(keyed.begin(), keyed.begin() + cut, keyed.end());
    }
    for (std::size_t i = 0; i < keyed.size(); ++i) order[g.begin + static_cast<index>(i)] = keyed[i].second;
    todo.push_back({g.begin, g.begin + cut, g.first_part, left_parts});
    todo.push_back({g.begin + cut, g.end, g.first_part + left_parts, g.parts - left_parts});
  }
  return part;
}

partition_result geometric_partition(const char* who, std::span<const double> coords, int dim,
                                     std::span<const double> weights, int parts, const bisection_key& key) {
  const gathered_points points = gather_points(who, coords, dim, weights, parts);
  const std::vector<int> all = recursive_bisection(points, key);
  partition_result result;
  result.quality = quality_of(all, points.weights, points.parts);
  const auto first = all.begin() + points.first_mine;
  result.owner.assign(first, first + points.mine);
  return result;
}

}  // namespace squall::chaos::detail
