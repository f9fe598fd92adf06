// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// How the parallel versions divide the mesh (paper section 5.1.1), computed the same on every
// node from the whole mesh (no runtime):
//   - a renaming of the nodes so that each part is a contiguous run of names (block parts of
//     the scrambled names, or recursive coordinate bisection, optionally a second RCB inside
//     each part, optionally each part padded to a multiple of some number of names);
//   - which part runs each edge and face: an item whose nodes all lie in one part goes to that
//     part, a cut item to the part (among its nodes' parts) with the fewest items so far.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "squall/apps/unstructured/mesh.hpp"

namespace squall::apps::unstructured {

// Node `old` is called name[old] after renaming; part p holds names [first[p], first[p] +
// count[p]); names from first[p] + count[p] to first[p + 1] are padding (no mesh node), and so
// are those between a part's groups (padded_groups).
struct Renaming {
  std::vector<NodeId> name;
  std::vector<std::size_t> first;  // parts + 1 entries; first.back() is the renamed length
  std::vector<std::size_t> count;  // parts entries

  std::size_t parts() const { return count.size(); }
  std::size_t length() const { return first.back(); }
  std::size_t part_of(NodeId renamed) const;  // the part whose range (with padding) holds it
};

// Identity renaming; part p holds the p-th block of ceil(nodes / parts) names.
Renaming block_renaming(std::size_t nodes, std::size_t parts);

struct RcbOptions {
  std::size_t parts = 1;
  // 0: each part's nodes keep the order of their old names. Otherwise a second RCB orders
  // each part into runs of at most `leaf` nodes that lie together.
  std::size_t leaf = 0;
  std::size_t align = 1;  // each part's range is padded to a multiple of this many names
};

// Recursive coordinate bisection: each cut halves (in proportion to the parts on each side)
// along the axis of largest extent, ties broken by old name, so the result is deterministic.
Renaming rcb_renaming(std::span<const Vec3> coords, const RcbOptions& options);

// Where padded_groups puts groups and parts: each group begins with the first name whose bytes
// start on a block boundary (the name that straddles it, if any, is padding), each part on a
// multiple of `align` names (whole blocks, so a block's first name is its part's).
struct GroupLayout {
  std::size_t block_bytes = 4096;
  std::size_t name_bytes = 1;
  std::size_t align = 1;
};

// The same parts, each laid out again by group (indexed by r's names): the part's names of its
// lowest group first, each group in the order it had and on blocks of its own (`layout`).
// count[p] covers the part's groups and the padding between them.
Renaming padded_groups(const Renaming& r, std::span<const std::uint32_t> group, const GroupLayout& layout);

// The mesh under new names: coords of padding names are the origin.
Mesh renamed_mesh(const Mesh& mesh, const Renaming& renaming);

// Part of each edge / face of a renamed mesh by the paper's rule (see above).
std::vector<std::uint32_t> assign_edges(std::span<const Edge> edges, const Renaming& renaming);
std::vector<std::uint32_t> assign_faces(std::span<const Face> faces, const Renaming& renaming);

// Item i of `items` to part floor(i * parts / items): block partition of a list.
std::vector<std::uint32_t> block_items(std::size_t items, std::size_t parts);

// Percentage of edges whose two nodes lie in different parts.
double cut_edges_percent(std::span<const Edge> edges, const Renaming& renaming);

}  // namespace squall::apps::unstructured
