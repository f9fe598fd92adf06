// SPDX-License-Identifier: BSD-3-Clause
// The call to METIS: a clean symmetric CSR graph (METIS wants no self-loops, no repeated
// edges, every edge both ways) with integer vertex weights.
#include <metis.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "partition_support.hpp"

namespace squall::chaos::detail {
namespace {

constexpr index idx_limit = std::numeric_limits<idx_t>::max();

// Every edge both ways, once, without self-loops, as CSR.
void symmetric_csr(const whole_graph& g, std::vector<idx_t>& xadj, std::vector<idx_t>& adjncy) {
  std::vector<std::pair<idx_t, idx_t>> arcs;
  arcs.reserve(2 * g.adjacency.size());
  for (index v = 0; v < g.vertices(); ++v) {
    for (index j = g.offsets[v]; j < g.offsets[v + 1]; ++j) {
      const index w = g.adjacency[j];
      if (w == v) continue;
      arcs.emplace_back(static_cast<idx_t>(v), static_cast<idx_t>(w));
      arcs.emplace_back(static_cast<idx_t>(w), static_cast<idx_t>(v));
    }
  }
  std::sort(arcs.begin(), arcs.end());
  arcs.erase(std::unique(arcs.begin(), arcs.end()), arcs.end());
  xadj.assign(static_cast<std::size_t>(g.vertices() + 1), 0);
  adjncy.resize(arcs.size());
  for (std::size_t i = 0; i < arcs.size(); ++i) {
    ++xadj[static_cast<std::size_t>(arcs[i].first) + 1];
    adjncy[i] = arcs[i].second;
  }
  for (std::size_t v = 0; v + 1 < xadj.size(); ++v) xadj[v + 1] += xadj[v];
}

// Weights as METIS's integers: scaled so that the heaviest vertex weighs up to a million and
// the total stays far from overflow. Empty (METIS then weighs every vertex 1) when there are
// no weights or they are all zero.
std::vector<idx_t> integer_weights(const std::vector<double>& weights) {
  double total = 0, heaviest = 0;
  for (double w : weights) {
    total += w;
    heaviest = std::max(heaviest, w);
  }
  if (total <= 0) return {};
  const double scale = std::min(1e6 / heaviest, static_cast<double>(idx_limit / 4) / total);
  std::vector<idx_t> out(weights.size());
  for (std::size_t v = 0; v < weights.size(); ++v) out[v] = static_cast<idx_t>(std::llround(weights[v] * scale));
  return out;
}

std::string metis_error(int status) {
  switch (status) {
    case METIS_ERROR_INPUT: return "METIS rejected its input (METIS_ERROR_INPUT)";
    case METIS_ERROR_MEMORY: return "METIS ran out of memory (METIS_ERROR_MEMORY)";
    default: return "METIS failed (status " + std::to_string(status) + ")";
  }
}

}  // namespace

std::string metis_kway(const whole_graph& graph, int parts, std::vector<int>& part) {
  if (graph.vertices() > idx_limit || static_cast<index>(2 * graph.adjacency.size()) > idx_limit) {
    return "the graph is too large for METIS's " + std::to_string(8 * sizeof(idx_t)) + "-bit indices";
  }
  std::vector<idx_t> xadj, adjncy;
  symmetric_csr(graph, xadj, adjncy);
  std::vector<idx_t> vwgt = integer_weights(graph.weights);

  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 12345;  // METIS is deterministic for a given seed
  options[METIS_OPTION_NUMBERING] = 0;

  idx_t nvtxs = static_cast<idx_t>(graph.vertices()), ncon = 1, nparts = parts, objval = 0;
  std::vector<idx_t> where(static_cast<std::size_t>(nvtxs), 0);
  const int status = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), vwgt.empty() ? nullptr : vwgt.data(),
                                         nullptr, nullptr, &nparts, nullptr, nullptr, options, &objval, where.data());
  if (status != METIS_OK) return metis_error(status);
  part.assign(where.begin(), where.end());
  return {};
}

}  // namespace squall::chaos::detail
