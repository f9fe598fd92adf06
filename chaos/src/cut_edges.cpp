// SPDX-License-Identifier: BSD-3-Clause
// Cut edges of a distribution: edges whose two ends have different owners, totalled over
// the nodes.
#include <array>
#include <cstdint>
#include <string>

#include <squall/collectives.hpp>

#include "agreement.hpp"
#include "partition_support.hpp"

namespace squall::chaos {
namespace {

std::string check_edges(const translation_table& table, std::span<const index> from, std::span<const index> to) {
  if (from.size() != to.size()) {
    return "edge_from holds " + std::to_string(from.size()) + " ends and edge_to " + std::to_string(to.size()) +
           " (one each per edge)";
  }
  for (const auto* ends : {&from, &to}) {
    for (std::size_t e = 0; e < ends->size(); ++e) {
      const index v = (*ends)[e];
      if (v < 0 || v >= table.global_size()) {
        return std::string(ends == &from ? "edge_from" : "edge_to") + "[" + std::to_string(e) + "] is " +
               std::to_string(v) + ", outside [0, " + std::to_string(table.global_size()) + ")";
      }
    }
  }
  return {};
}

}  // namespace

cut_figures cut_edges(const translation_table& table, std::span<const index> edge_from, std::span<const index> edge_to) {
  // Checked before the lookups, which would throw on this node only.
  detail::agree_or_throw(check_edges(table, edge_from, edge_to), "chaos::cut_edges");
  const std::vector<location> a = table.lookup(edge_from), b = table.lookup(edge_to);
  std::array<std::int64_t, 2> mine{static_cast<std::int64_t>(a.size()), 0};
  for (std::size_t e = 0; e < a.size(); ++e) mine[1] += a[e].owner != b[e].owner;
  std::array<std::int64_t, 2> total{};
  squall::allreduce(std::span<const std::int64_t>(mine), std::span<std::int64_t>(total));
  return {total[0], total[1]};
}

}  // namespace squall::chaos
