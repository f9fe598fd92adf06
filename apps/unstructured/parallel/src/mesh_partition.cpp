// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/unstructured/mesh_partition.hpp"

#include <algorithm>
#include <span>

#include <squall/chaos/partition.hpp>
#include <squall/chaos/remap.hpp>
#include <squall/chaos/schedule.hpp>
#include <squall/squall.hpp>

namespace squall::apps::unstructured {
namespace {

namespace chaos = squall::chaos;
using chaos::index;

// This node's block [first, end) of `count` items.
std::pair<index, index> block_of(std::size_t count) {
  const auto n = static_cast<index>(count);
  const index me = squall::node(), nodes = squall::nodes();
  return {n * me / nodes, n * (me + 1) / nodes};
}

// Gives this node's block of items (each referencing `arity` mesh nodes, listed by
// `mesh_nodes_of`) to their nodes by almost-owner-computes; returns the positions this node
// runs, ascending.
template <class Item, class MeshNodes>
std::vector<std::int64_t> assign(const chaos::translation_table& table, const std::vector<Item>& items,
                                 MeshNodes mesh_nodes_of) {
  const auto [first, end] = block_of(items.size());
  std::vector<index> offsets{0}, refs, ids;
  for (index i = first; i < end; ++i) {
    for (NodeId node : mesh_nodes_of(items[static_cast<std::size_t>(i)])) refs.push_back(node);
    offsets.push_back(static_cast<index>(refs.size()));
    ids.push_back(i);
  }
  const std::vector<int> dest =
      chaos::partition_iterations(table, offsets, refs, chaos::iteration_rule::almost_owner_computes);
  std::vector<std::int64_t> mine = chaos::scatter_append(std::span<const index>(ids), std::span<const int>(dest));
  std::sort(mine.begin(), mine.end());
  return mine;
}

}  // namespace

MeshPartition partition_mesh(const Mesh& mesh) {
  const chaos::translation_table block = chaos::translation_table::block(static_cast<index>(mesh.node_count()));
  std::vector<double> coords;
  for (index g : block.owned()) {
    const Vec3& c = mesh.coords[static_cast<std::size_t>(g)];
    coords.insert(coords.end(), {c.x, c.y, c.z});
  }
  const chaos::partition_result rcb = chaos::rcb(coords, 3);
  chaos::translation_table table(chaos::owned_after(block, rcb.owner), static_cast<index>(mesh.node_count()));

  std::vector<std::int64_t> edges = assign(table, mesh.edges, [](const Edge& e) { return std::array{e.a, e.b}; });
  std::vector<std::int64_t> faces = assign(table, mesh.faces, [](const Face& f) { return f.nodes; });

  const auto [first, end] = block_of(mesh.edges.size());
  std::vector<index> from, to;
  for (index e = first; e < end; ++e) {
    from.push_back(mesh.edges[static_cast<std::size_t>(e)].a);
    to.push_back(mesh.edges[static_cast<std::size_t>(e)].b);
  }
  const double cut = 100.0 * chaos::cut_edges(table, from, to).fraction();
  return {std::move(table), std::move(edges), std::move(faces), cut};
}

}  // namespace squall::apps::unstructured
