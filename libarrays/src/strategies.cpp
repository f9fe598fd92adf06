// SPDX-License-Identifier: BSD-3-Clause
#include "strategies.hpp"

#include <metis.h>

#include <squall/error.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <queue>

namespace squall::arrays::detail {
namespace {

std::vector<std::size_t> heaviest_first(const std::vector<lb_element>& elements) {
  std::vector<std::size_t> order(elements.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return elements[a].load > elements[b].load; });
  return order;
}

std::vector<int> current(const std::vector<lb_element>& elements) {
  std::vector<int> placement(elements.size());
  for (std::size_t i = 0; i < elements.size(); ++i) placement[i] = elements[i].node;
  return placement;
}

}  // namespace

std::vector<double> node_loads(const std::vector<lb_element>& elements, const std::vector<int>& placement, int nodes) {
  std::vector<double> load(static_cast<std::size_t>(nodes), 0.0);
  for (std::size_t i = 0; i < elements.size(); ++i) load[static_cast<std::size_t>(placement[i])] += elements[i].load;
  return load;
}

std::vector<int> greedy_plan(const std::vector<lb_element>& elements, int nodes) {
  using entry = std::pair<double, int>;  // (load, node), least first
  std::priority_queue<entry, std::vector<entry>, std::greater<>> least;
  for (int n = 0; n < nodes; ++n) least.emplace(0.0, n);
  std::vector<int> placement(elements.size());
  for (std::size_t i : heaviest_first(elements)) {
    auto [load, node] = least.top();
    least.pop();
    placement[i] = node;
    least.emplace(load + elements[i].load, node);
  }
  return placement;
}

std::vector<int> refine_plan(const std::vector<lb_element>& elements, int nodes, double tolerance) {
  std::vector<int> placement = current(elements);
  std::vector<double> load = node_loads(elements, placement, nodes);
  const double average = std::accumulate(load.begin(), load.end(), 0.0) / nodes;
  const double limit = average * (1 + tolerance);
  // Elements of each node, heaviest first.
  std::vector<std::vector<std::size_t>> on(static_cast<std::size_t>(nodes));
  for (std::size_t i : heaviest_first(elements)) on[static_cast<std::size_t>(placement[i])].push_back(i);
  for (;;) {
    const auto heavy = static_cast<std::size_t>(std::max_element(load.begin(), load.end()) - load.begin());
    const auto light = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    if (load[heavy] <= limit || heavy == light) break;
    // The heaviest element that leaves the light node below the heavy one's new load.
    auto& from = on[heavy];
    auto pick = std::find_if(from.begin(), from.end(), [&](std::size_t i) {
      return elements[i].load > 0 && load[light] + elements[i].load < load[heavy];
    });
    if (pick == from.end()) break;  // nothing moves it closer
    const std::size_t i = *pick;
    from.erase(pick);
    on[light].push_back(i);
    load[heavy] -= elements[i].load;
    load[light] += elements[i].load;
    placement[i] = static_cast<int>(light);
  }
  return placement;
}

std::vector<int> metis_plan(const std::vector<lb_element>& elements, int nodes) {
  const std::size_t n = elements.size();
  if (nodes == 1 || n <= static_cast<std::size_t>(nodes)) return greedy_plan(elements, nodes);
  // Symmetric graph, edge weights the bytes both ways, no self-loops.
  std::vector<std::map<std::size_t, double>> adj(n);
  for (std::size_t v = 0; v < n; ++v) {
    for (auto [w, bytes] : elements[v].edges) {
      if (w == v || w >= n) continue;
      adj[v][w] += bytes;
      adj[w][v] += bytes;
    }
  }
  std::vector<idx_t> xadj(n + 1, 0), adjncy, adjwgt, vwgt(n);
  double heaviest = 0, total = 0;
  for (const auto& e : elements) {
    heaviest = std::max(heaviest, e.load);
    total += e.load;
  }
  const double scale = heaviest > 0 ? std::min(1e6 / heaviest, 1e9 / total) : 0;
  for (std::size_t v = 0; v < n; ++v) {
    vwgt[v] = std::max<idx_t>(1, static_cast<idx_t>(std::llround(elements[v].load * scale)));
    for (auto [w, bytes] : adj[v]) {
      adjncy.push_back(static_cast<idx_t>(w));
      adjwgt.push_back(std::max<idx_t>(1, static_cast<idx_t>(std::min(bytes, 1e9))));
    }
    xadj[v + 1] = static_cast<idx_t>(adjncy.size());
  }
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 12345;
  idx_t nvtxs = static_cast<idx_t>(n), ncon = 1, nparts = nodes, objval = 0;
  std::vector<idx_t> part(n, 0);
  const int status = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), vwgt.data(), nullptr,
                                         adjwgt.empty() ? nullptr : adjwgt.data(), &nparts, nullptr, nullptr, options,
                                         &objval, part.data());
  if (status != METIS_OK) throw squall::usage_error("libarrays: METIS failed (status " + std::to_string(status) + ")");
  // Parts to nodes: the pairs that share the most load first, so that few elements move.
  std::vector<std::vector<double>> overlap(static_cast<std::size_t>(nodes), std::vector<double>(static_cast<std::size_t>(nodes), 0));
  for (std::size_t v = 0; v < n; ++v) overlap[static_cast<std::size_t>(part[v])][static_cast<std::size_t>(elements[v].node)] += elements[v].load + 1e-9;
  std::vector<std::tuple<double, int, int>> pairs;
  for (int p = 0; p < nodes; ++p)
    for (int q = 0; q < nodes; ++q) pairs.emplace_back(overlap[static_cast<std::size_t>(p)][static_cast<std::size_t>(q)], p, q);
  std::stable_sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return std::get<0>(a) > std::get<0>(b); });
  std::vector<int> node_of_part(static_cast<std::size_t>(nodes), -1);
  std::vector<bool> taken(static_cast<std::size_t>(nodes), false);
  for (auto [w, p, q] : pairs) {
    if (node_of_part[static_cast<std::size_t>(p)] >= 0 || taken[static_cast<std::size_t>(q)]) continue;
    node_of_part[static_cast<std::size_t>(p)] = q;
    taken[static_cast<std::size_t>(q)] = true;
  }
  std::vector<int> placement(n);
  for (std::size_t v = 0; v < n; ++v) placement[v] = node_of_part[static_cast<std::size_t>(part[v])];
  return placement;
}

}  // namespace squall::arrays::detail
