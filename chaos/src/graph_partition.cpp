// SPDX-License-Identifier: BSD-3-Clause
// Graph partitioning with METIS. The graph is gathered to node 0, which runs METIS and
// broadcasts every vertex's part (memory O(vertices) on every node, O(graph) on node 0): the
// same kind of simplification as the gathered bisection in recursive_bisection.cpp.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <squall/chaos/exchange.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>

#include "agreement.hpp"
#include "partition_support.hpp"

namespace squall::chaos {
namespace {

std::string check_graph(const translation_table& table, std::span<const index> offsets, std::span<const index> adjacency,
                        std::span<const double> weights) {
  const index vertices = table.local_size();
  const bool no_offsets_needed = vertices == 0 && offsets.empty();
  if (!no_offsets_needed && static_cast<index>(offsets.size()) != vertices + 1) {
    return "offsets holds " + std::to_string(offsets.size()) + " values for " + std::to_string(vertices) +
           " vertices (one more than the vertices is needed)";
  }
  if (!offsets.empty()) {
    if (offsets.front() != 0) return "offsets must start at 0 (got " + std::to_string(offsets.front()) + ")";
    for (std::size_t i = 1; i < offsets.size(); ++i) {
      if (offsets[i] < offsets[i - 1]) return "offsets decrease at vertex " + std::to_string(i - 1);
    }
  }
  const index ends = offsets.empty() ? 0 : offsets.back();
  if (ends != static_cast<index>(adjacency.size())) {
    return "offsets end at " + std::to_string(ends) + " but adjacency holds " + std::to_string(adjacency.size()) +
           " values";
  }
  for (std::size_t j = 0; j < adjacency.size(); ++j) {
    if (adjacency[j] < 0 || adjacency[j] >= table.global_size()) {
      return "adjacency[" + std::to_string(j) + "] is " + std::to_string(adjacency[j]) + ", outside [0, " +
             std::to_string(table.global_size()) + ")";
    }
  }
  if (!weights.empty() && static_cast<index>(weights.size()) != vertices) {
    return "weights holds " + std::to_string(weights.size()) + " values for " + std::to_string(vertices) +
           " vertices (give one per vertex, or none)";
  }
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (!(weights[i] >= 0) || !std::isfinite(weights[i])) {
      return "weight " + std::to_string(i) + " is " + std::to_string(weights[i]) + " (weights must be finite and not negative)";
    }
  }
  return {};
}

// Node 0's string on every node.
std::string broadcast_string(std::string s) {
  auto length = static_cast<std::uint64_t>(s.size());
  squall::broadcast(length);
  s.resize(length);
  squall::broadcast(std::span<char>(s.data(), s.size()));
  return s;
}

// Node 0 puts the graph together from what every node sent it.
detail::whole_graph assemble(index vertices, const std::vector<std::vector<index>>& owned_by,
                             const std::vector<std::vector<index>>& degrees_by,
                             const std::vector<std::vector<index>>& adjacency_by,
                             const std::vector<std::vector<double>>& weights_by, bool weighted) {
  detail::whole_graph g;
  g.offsets.assign(static_cast<std::size_t>(vertices + 1), 0);
  if (weighted) g.weights.assign(static_cast<std::size_t>(vertices), 0.0);
  for (std::size_t s = 0; s < owned_by.size(); ++s) {
    for (std::size_t i = 0; i < owned_by[s].size(); ++i) {
      const auto v = static_cast<std::size_t>(owned_by[s][i]);
      g.offsets[v + 1] = degrees_by[s][i];
      if (weighted) g.weights[v] = weights_by[s][i];
    }
  }
  for (std::size_t v = 0; v < static_cast<std::size_t>(vertices); ++v) g.offsets[v + 1] += g.offsets[v];
  g.adjacency.resize(static_cast<std::size_t>(g.offsets.back()));
  for (std::size_t s = 0; s < owned_by.size(); ++s) {
    std::size_t from = 0;
    for (std::size_t i = 0; i < owned_by[s].size(); ++i) {
      const auto to = g.adjacency.begin() + g.offsets[static_cast<std::size_t>(owned_by[s][i])];
      const auto degree = static_cast<std::size_t>(degrees_by[s][i]);
      std::copy(adjacency_by[s].begin() + static_cast<std::ptrdiff_t>(from),
                adjacency_by[s].begin() + static_cast<std::ptrdiff_t>(from + degree), to);
      from += degree;
    }
  }
  return g;
}

// Everything to node 0 (the typed exchange, with nothing for the other nodes).
template <class T>
std::vector<std::vector<T>> to_node0(std::span<const T> mine) {
  std::vector<std::vector<T>> out(static_cast<std::size_t>(squall::nodes()));
  out[0].assign(mine.begin(), mine.end());
  return exchange(out);
}

}  // namespace

partition_result graph_partition(const translation_table& table, std::span<const index> offsets,
                                 std::span<const index> adjacency, std::span<const double> weights, int parts) {
  std::string problem = check_graph(table, offsets, adjacency, weights);
  const int k = detail::parts_wanted(parts, problem);
  detail::agree_or_throw(problem, "chaos::graph_partition");

  // Checks across the nodes: the same parts everywhere, weights everywhere or nowhere.
  const index vertices = table.global_size(), mine = table.local_size();
  const std::array<std::int64_t, 4> flags_in{!weights.empty(), mine > 0 && weights.empty(), k, -k};
  std::array<std::int64_t, 4> flags{};
  squall::allreduce(std::span<const std::int64_t>(flags_in), std::span<std::int64_t>(flags), squall::op::max{});
  const std::string prefix = "chaos::graph_partition: ";
  if (flags[0] && flags[1]) throw usage_error(prefix + "some nodes gave weights and others none (give them on every node, or on none)");
  if (flags[2] != -flags[3]) throw usage_error(prefix + "every node must ask for the same number of parts");
  if (k > vertices) {
    throw usage_error(prefix + std::to_string(k) + " parts asked for " + std::to_string(vertices) +
                      " vertices (at most one part per vertex)");
  }
  const bool weighted = flags[0] != 0;

  partition_result result;
  if (k == 1) {  // METIS misbehaves with one part; nothing to decide anyway
    result.owner.assign(static_cast<std::size_t>(mine), 0);
    double weight = 0;
    for (double w : weights) weight += w;
    const double total = squall::allreduce(weighted ? weight : static_cast<double>(mine));
    result.quality = {1, vertices, vertices, total, total, 1.0};
    return result;
  }

  std::vector<index> degrees(static_cast<std::size_t>(mine));
  for (std::size_t i = 0; i < degrees.size(); ++i) degrees[i] = offsets[i + 1] - offsets[i];
  const auto owned_by = to_node0(table.owned());
  const auto degrees_by = to_node0(std::span<const index>(degrees));
  const auto adjacency_by = to_node0(adjacency);
  const auto weights_by = to_node0(weights);

  std::vector<int> part(static_cast<std::size_t>(vertices), 0);
  std::string failure;
  if (squall::node() == 0) {
    const detail::whole_graph g = assemble(vertices, owned_by, degrees_by, adjacency_by, weights_by, weighted);
    failure = detail::metis_kway(g, k, part);
    if (failure.empty()) result.quality = detail::quality_of(part, g.weights, k);
  }
  failure = broadcast_string(failure);
  if (!failure.empty()) throw std::runtime_error(prefix + failure);
  squall::broadcast(std::span<int>(part));
  squall::broadcast(result.quality);

  result.owner.resize(static_cast<std::size_t>(mine));
  const std::span<const index> owned = table.owned();
  for (std::size_t i = 0; i < owned.size(); ++i) result.owner[i] = part[static_cast<std::size_t>(owned[i])];
  return result;
}

}  // namespace squall::chaos
