// SPDX-License-Identifier: BSD-3-Clause
// Load-balancing strategies: pure functions from the elements' measured loads (and the
// messages between them) and their current nodes to new nodes.
//
//   greedy  heaviest first, each to the least-loaded node: the best spread, ignoring where
//           elements are (most of them move)
//   refine  from the current placement, moves elements off nodes loaded above the average
//           (by more than the tolerance) onto the least-loaded nodes, heaviest that fits
//           first: few migrations
//   metis   a k-way partition of the communication graph (METIS, the distribution's libmetis)
//           weighted by load, its parts then matched to the nodes that hold most of them
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace squall::arrays::detail {

struct lb_element {
  double load = 0;
  int node = 0;
  std::vector<std::pair<std::size_t, double>> edges;  // (other element, bytes sent to it)
};

std::vector<int> greedy_plan(const std::vector<lb_element>& elements, int nodes);
std::vector<int> refine_plan(const std::vector<lb_element>& elements, int nodes, double tolerance = 0.05);
// Throws squall::usage_error when METIS fails.
std::vector<int> metis_plan(const std::vector<lb_element>& elements, int nodes);

// The per-node load sums of a placement.
std::vector<double> node_loads(const std::vector<lb_element>& elements, const std::vector<int>& placement, int nodes);

}  // namespace squall::arrays::detail
