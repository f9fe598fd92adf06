// SPDX-License-Identifier: BSD-3-Clause
#include "partitioned_mesh.hpp"

#include <squall/chaos/partition.hpp>
#include <squall/chaos/schedule.hpp>
#include <squall/squall.hpp>

namespace squall::bench::chaos_exchange {

namespace chaos = squall::chaos;
using chaos::index;

initial_block take_block(const mesh::Mesh& m) {
  const int me = squall::node(), n = squall::nodes();
  initial_block b{chaos::translation_table::block(static_cast<index>(m.node_count())), {}, {}};
  for (index g : b.table.owned()) {
    const auto& c = m.coords[static_cast<std::size_t>(g)];
    b.coords.insert(b.coords.end(), {c.x, c.y, c.z});
  }
  const auto edges = static_cast<index>(m.edges.size());
  for (index e = edges * me / n; e < edges * (me + 1) / n; ++e) {
    const auto& edge = m.edges[static_cast<std::size_t>(e)];
    b.edges.push_back({e, edge.a, edge.b});
  }
  return b;
}

std::vector<edge_item> assign_edges(const chaos::translation_table& table, std::span<const edge_item> block) {
  std::vector<index> offsets{0}, refs;
  for (const edge_item& e : block) {
    refs.insert(refs.end(), {e.a, e.b});
    offsets.push_back(static_cast<index>(refs.size()));
  }
  const std::vector<int> dest =
      chaos::partition_iterations(table, offsets, refs, chaos::iteration_rule::almost_owner_computes);
  return chaos::scatter_append(block, std::span<const int>(dest));
}

}  // namespace squall::bench::chaos_exchange
