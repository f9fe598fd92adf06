// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// An unstructured mesh as the application sees it: node coordinates, an explicit edge list and
// an explicit list of boundary faces (triangles), all naming nodes by index ("name").
#include <array>
#include <cstdint>
#include <vector>

#include "squall/apps/vec3.hpp"

namespace squall::apps::unstructured {

using NodeId = std::uint32_t;

struct Edge {
  NodeId a, b;
};

struct Face {
  std::array<NodeId, 3> nodes;
};

struct Mesh {
  std::vector<Vec3> coords;  // indexed by node name
  std::vector<Edge> edges;
  std::vector<Face> faces;

  std::size_t node_count() const { return coords.size(); }
};

}  // namespace squall::apps::unstructured
