// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Generates the 3-D mesh: a box of cubic cells around a wing-like hole, each cell split into six
// tetrahedra (Kuhn/Freudenthal split, all sharing the cell's main diagonal, so neighbouring cells
// agree on every face diagonal). Edges are the tetrahedra's edges; faces are the boundary
// triangles (outer box and hole surface). Node coordinates are jittered lattice points, and node
// names, edge order and face order are shuffled so that names carry no trace of the structure.
#include <array>
#include <cstdint>

#include "squall/apps/unstructured/mesh.hpp"

namespace squall::apps::unstructured {

struct MeshShape {
  std::array<int, 3> cells;  // box size in cells
  std::array<int, 3> hole;   // centred hole in cells; all zero for none
  friend bool operator==(const MeshShape&, const MeshShape&) = default;
};

struct MeshCounts {
  std::size_t nodes, edges, faces;
  friend bool operator==(const MeshCounts&, const MeshCounts&) = default;
};

// The paper's input (Table 1: 9,428 nodes, 59,863 edges, 5,864 faces) is matched by a
// 32x16x16-cell box with a 17x8x2-cell hole: 9,425 nodes, 59,875 edges, 5,864 faces.
inline constexpr MeshShape kPaperShape{{32, 16, 16}, {17, 8, 2}};
inline constexpr std::size_t kPaperNodes = 9428;

// The counts a shape yields, in closed form (tests check the generator against it).
MeshCounts expected_counts(const MeshShape& shape);

// The paper's shape scaled so that its node count is as near `target_nodes` as rounding allows.
MeshShape shape_for_nodes(std::size_t target_nodes);

Mesh generate_mesh(const MeshShape& shape, std::uint64_t seed);

}  // namespace squall::apps::unstructured
