// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/unstructured/partition.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace squall::apps::unstructured {
namespace {

double coordinate(const Vec3& v, int axis) { return axis == 0 ? v.x : axis == 1 ? v.y : v.z; }

int widest_axis(std::span<const Vec3> coords, std::span<const NodeId> nodes) {
  Vec3 low = coords[nodes.front()], high = low;
  for (NodeId n : nodes) {
    const Vec3& c = coords[n];
    low = {std::min(low.x, c.x), std::min(low.y, c.y), std::min(low.z, c.z)};
    high = {std::max(high.x, c.x), std::max(high.y, c.y), std::max(high.z, c.z)};
  }
  const double dx = high.x - low.x, dy = high.y - low.y, dz = high.z - low.z;
  return dx >= dy && dx >= dz ? 0 : dy >= dz ? 1 : 2;
}

// Puts the `left` nodes of lowest coordinate along the widest axis first.
void split(std::span<const Vec3> coords, std::span<NodeId> nodes, std::size_t left) {
  const int axis = widest_axis(coords, nodes);
  std::nth_element(nodes.begin(), nodes.begin() + static_cast<std::ptrdiff_t>(left), nodes.end(),
                   [&](NodeId a, NodeId b) {
                     const double ca = coordinate(coords[a], axis), cb = coordinate(coords[b], axis);
                     return ca < cb || (ca == cb && a < b);
                   });
}

// Cuts `nodes` into `parts` groups (sizes in proportion), group k ending at ends[k].
void bisect_into_parts(std::span<const Vec3> coords, std::span<NodeId> nodes, std::size_t parts,
                       std::size_t offset, std::vector<std::size_t>& ends) {
  if (parts == 1) {
    ends.push_back(offset + nodes.size());
    return;
  }
  const std::size_t left_parts = parts / 2;
  const std::size_t left = nodes.size() * left_parts / parts;
  if (!nodes.empty()) split(coords, nodes, left);
  bisect_into_parts(coords, nodes.first(left), left_parts, offset, ends);
  bisect_into_parts(coords, nodes.subspan(left), parts - left_parts, offset + left, ends);
}

// Orders `nodes` so that RCB leaves of at most `leaf` nodes are contiguous.
void bisect_into_leaves(std::span<const Vec3> coords, std::span<NodeId> nodes, std::size_t leaf) {
  if (nodes.size() <= leaf) return;
  const std::size_t left = nodes.size() / 2;
  split(coords, nodes, left);
  bisect_into_leaves(coords, nodes.first(left), leaf);
  bisect_into_leaves(coords, nodes.subspan(left), leaf);
}

template <class Item, class NodesOf>
std::vector<std::uint32_t> assign_items(std::span<const Item> items, const Renaming& renaming, NodesOf nodes_of) {
  std::vector<std::uint32_t> part(items.size());
  std::vector<std::size_t> load(renaming.parts(), 0);
  std::vector<bool> cut(items.size(), false);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto ends = nodes_of(items[i]);
    const std::size_t p = renaming.part_of(ends.front());
    for (NodeId n : ends) cut[i] = cut[i] || renaming.part_of(n) != p;
    part[i] = static_cast<std::uint32_t>(p);
    if (!cut[i]) ++load[p];
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!cut[i]) continue;
    std::size_t best = part[i];
    for (NodeId n : nodes_of(items[i])) {
      const std::size_t p = renaming.part_of(n);
      if (load[p] < load[best]) best = p;
    }
    part[i] = static_cast<std::uint32_t>(best);
    ++load[best];
  }
  return part;
}

}  // namespace

std::size_t Renaming::part_of(NodeId renamed) const {
  return static_cast<std::size_t>(std::upper_bound(first.begin(), first.end(), std::size_t{renamed}) - first.begin()) - 1;
}

Renaming block_renaming(std::size_t nodes, std::size_t parts) {
  if (parts == 0) throw std::invalid_argument("block_renaming: no parts");
  Renaming r;
  r.name.resize(nodes);
  for (std::size_t n = 0; n < nodes; ++n) r.name[n] = static_cast<NodeId>(n);
  const std::size_t block = (nodes + parts - 1) / parts;
  for (std::size_t p = 0; p <= parts; ++p) r.first.push_back(std::min(nodes, p * block));
  for (std::size_t p = 0; p < parts; ++p) r.count.push_back(r.first[p + 1] - r.first[p]);
  return r;
}

Renaming rcb_renaming(std::span<const Vec3> coords, const RcbOptions& options) {
  if (options.parts == 0 || options.align == 0) throw std::invalid_argument("rcb_renaming: parts and align must be positive");
  std::vector<NodeId> order(coords.size());
  for (std::size_t n = 0; n < order.size(); ++n) order[n] = static_cast<NodeId>(n);
  std::vector<std::size_t> ends;
  bisect_into_parts(coords, order, options.parts, 0, ends);

  Renaming r;
  r.name.resize(coords.size());
  r.first.push_back(0);
  std::size_t begin = 0;
  for (std::size_t end : ends) {
    const std::span<NodeId> part(order.data() + begin, end - begin);
    if (options.leaf == 0) {
      std::sort(part.begin(), part.end());
    } else {
      bisect_into_leaves(coords, part, options.leaf);
    }
    const std::size_t base = r.first.back();
    for (std::size_t k = 0; k < part.size(); ++k) r.name[part[k]] = static_cast<NodeId>(base + k);
    r.count.push_back(part.size());
    r.first.push_back(base + (part.size() + options.align - 1) / options.align * options.align);
    begin = end;
  }
  return r;
}

Renaming padded_groups(const Renaming& r, std::span<const std::uint32_t> group, const GroupLayout& layout) {
  if (layout.align == 0 || layout.block_bytes == 0 || layout.name_bytes == 0 || group.size() != r.length()) {
    throw std::invalid_argument("padded_groups: a zero size, or groups for another number of names");
  }
  // The first name at or after `at` whose bytes start on a block boundary.
  const auto block_start = [&](std::size_t at) {
    const std::size_t block = (at * layout.name_bytes + layout.block_bytes - 1) / layout.block_bytes;
    return (block * layout.block_bytes + layout.name_bytes - 1) / layout.name_bytes;
  };
  std::vector<std::size_t> moved_to(r.length(), 0);  // r's name -> the new one
  Renaming out;
  out.first.push_back(0);
  std::vector<std::uint32_t> groups;
  for (std::size_t p = 0; p < r.parts(); ++p) {
    const std::span<const std::uint32_t> mine = group.subspan(r.first[p], r.count[p]);
    groups.assign(mine.begin(), mine.end());
    std::sort(groups.begin(), groups.end());
    groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
    std::size_t at = out.first.back(), end = at;
    for (const std::uint32_t g : groups) {
      at = block_start(at);
      for (std::size_t k = 0; k < mine.size(); ++k) {
        if (mine[k] == g) moved_to[r.first[p] + k] = at++;
      }
      end = at;
    }
    out.count.push_back(end - out.first.back());
    out.first.push_back((end + layout.align - 1) / layout.align * layout.align);
  }
  out.name.resize(r.name.size());
  for (std::size_t old = 0; old < r.name.size(); ++old) out.name[old] = static_cast<NodeId>(moved_to[r.name[old]]);
  return out;
}

Mesh renamed_mesh(const Mesh& mesh, const Renaming& renaming) {
  Mesh out;
  out.coords.assign(renaming.length(), Vec3{});
  for (std::size_t n = 0; n < mesh.node_count(); ++n) out.coords[renaming.name[n]] = mesh.coords[n];
  out.edges.reserve(mesh.edges.size());
  for (const Edge& e : mesh.edges) out.edges.push_back({renaming.name[e.a], renaming.name[e.b]});
  out.faces.reserve(mesh.faces.size());
  for (const Face& f : mesh.faces) {
    out.faces.push_back({{renaming.name[f.nodes[0]], renaming.name[f.nodes[1]], renaming.name[f.nodes[2]]}});
  }
  return out;
}

std::vector<std::uint32_t> assign_edges(std::span<const Edge> edges, const Renaming& renaming) {
  return assign_items(edges, renaming, [](const Edge& e) { return std::array<NodeId, 2>{e.a, e.b}; });
}

std::vector<std::uint32_t> assign_faces(std::span<const Face> faces, const Renaming& renaming) {
  return assign_items(faces, renaming, [](const Face& f) { return f.nodes; });
}

std::vector<std::uint32_t> block_items(std::size_t items, std::size_t parts) {
  std::vector<std::uint32_t> part(items);
  for (std::size_t i = 0; i < items; ++i) part[i] = static_cast<std::uint32_t>(i * parts / items);
  return part;
}

double cut_edges_percent(std::span<const Edge> edges, const Renaming& renaming) {
  if (edges.empty()) return 0;
  std::size_t cut = 0;
  for (const Edge& e : edges) cut += renaming.part_of(e.a) != renaming.part_of(e.b);
  return 100.0 * static_cast<double>(cut) / static_cast<double>(edges.size());
}

}  // namespace squall::apps::unstructured
