// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/unstructured/serial_partition.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <utility>

namespace squall::apps::unstructured {
namespace {

struct Group {
  std::size_t begin, end;  // range of the node order
  int first_part, parts;
};

// Nodes parts [first, first + count) get when n nodes are spread over `parts` parts as evenly
// as possible (the first n % parts parts one more).
std::size_t nodes_for(std::size_t n, int parts, int first, int count) {
  const std::size_t base = n / static_cast<std::size_t>(parts);
  const auto extra = static_cast<int>(n % static_cast<std::size_t>(parts));
  return base * static_cast<std::size_t>(count) + static_cast<std::size_t>(std::clamp(extra - first, 0, count));
}

double along(const Vec3& p, int axis) { return axis == 0 ? p.x : axis == 1 ? p.y : p.z; }

std::vector<std::int32_t> rcb_owners(std::span<const Vec3> coords, int parts) {
  const std::size_t n = coords.size();
  std::vector<std::int32_t> owner(n, 0);
  std::vector<NodeId> order(n);
  std::iota(order.begin(), order.end(), NodeId{0});
  std::vector<Group> todo{{0, n, 0, parts}};
  std::vector<std::pair<double, NodeId>> keyed;
  while (!todo.empty()) {
    const Group g = todo.back();
    todo.pop_back();
    if (g.parts == 1) {
      for (std::size_t i = g.begin; i < g.end; ++i) owner[order[i]] = g.first_part;
      continue;
    }
    std::array<double, 3> lo, hi;
    lo.fill(std::numeric_limits<double>::infinity());
    hi.fill(-std::numeric_limits<double>::infinity());
    for (std::size_t i = g.begin; i < g.end; ++i) {
      for (int a = 0; a < 3; ++a) {
        lo[a] = std::min(lo[a], along(coords[order[i]], a));
        hi[a] = std::max(hi[a], along(coords[order[i]], a));
      }
    }
    int axis = 0;
    for (int a = 1; a < 3; ++a) {
      if (hi[a] - lo[a] > hi[axis] - lo[axis]) axis = a;
    }
    keyed.clear();
    for (std::size_t i = g.begin; i < g.end; ++i) keyed.emplace_back(along(coords[order[i]], axis), order[i]);
    const int left_parts = g.parts / 2;
    const std::size_t cut = nodes_for(n, parts, g.first_part, left_parts);
    std::nth_element(keyed.begin(), keyed.begin() + static_cast<std::ptrdiff_t>(cut), keyed.end());
    for (std::size_t i = 0; i < keyed.size(); ++i) order[g.begin + i] = keyed[i].second;
    todo.push_back({g.begin, g.begin + cut, g.first_part, left_parts});
    todo.push_back({g.begin + cut, g.end, g.first_part + left_parts, g.parts - left_parts});
  }
  return owner;
}

// Almost-owner-computes, in list order; the loads count from zero again at the start of each
// of `parts` blocks of the list (chaos::partition_iterations on each node's block).
template <class Item, class MeshNodes>
std::vector<std::int32_t> assign(const std::vector<Item>& items, const std::vector<std::int32_t>& node_owner,
                                 int parts, MeshNodes mesh_nodes_of) {
  std::vector<std::int64_t> load(static_cast<std::size_t>(parts), 0);
  std::vector<std::int32_t> owner;
  owner.reserve(items.size());
  int block = 0;
  for (const Item& item : items) {
    const std::size_t i = owner.size();
    // Block b holds the items [b * n / parts, (b + 1) * n / parts).
    while (i >= items.size() * static_cast<std::size_t>(block + 1) / static_cast<std::size_t>(parts)) {
      ++block;
      std::fill(load.begin(), load.end(), 0);
    }
    const auto nodes = mesh_nodes_of(item);
    std::int32_t best = -1;
    int best_refs = 0;
    for (NodeId node : nodes) {
      const std::int32_t p = node_owner[node];
      const auto refs = static_cast<int>(std::count_if(nodes.begin(), nodes.end(), [&](NodeId m) { return node_owner[m] == p; }));
      const bool better = refs > best_refs ||
                          (refs == best_refs && (load[static_cast<std::size_t>(p)] < load[static_cast<std::size_t>(best)] ||
                                                 (load[static_cast<std::size_t>(p)] == load[static_cast<std::size_t>(best)] && p < best)));
      if (best < 0 || better) {
        best = p;
        best_refs = refs;
      }
    }
    ++load[static_cast<std::size_t>(best)];
    owner.push_back(best);
  }
  return owner;
}

}  // namespace

SerialPartition serial_partition(const Mesh& mesh, int parts) {
  if (parts < 1 || static_cast<std::size_t>(parts) > mesh.node_count()) {
    throw std::invalid_argument("unstructured: cannot cut " + std::to_string(mesh.node_count()) + " mesh nodes into " +
                                std::to_string(parts) + " parts");
  }
  SerialPartition out;
  out.node_owner = rcb_owners(mesh.coords, parts);
  out.edge_owner = assign(mesh.edges, out.node_owner, parts, [](const Edge& e) { return std::array{e.a, e.b}; });
  out.face_owner = assign(mesh.faces, out.node_owner, parts, [](const Face& f) { return f.nodes; });
  std::size_t cut = 0;
  for (const Edge& e : mesh.edges) cut += out.node_owner[e.a] != out.node_owner[e.b];
  out.cut_edges_pct = mesh.edges.empty() ? 0.0 : 100.0 * static_cast<double>(cut) / static_cast<double>(mesh.edges.size());
  return out;
}

}  // namespace squall::apps::unstructured
