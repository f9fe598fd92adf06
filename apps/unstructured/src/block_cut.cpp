// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/unstructured/block_cut.hpp"

namespace squall::apps::unstructured {

std::size_t block_owner(NodeId node, std::size_t node_count, std::size_t parts) {
  const std::size_t block = (node_count + parts - 1) / parts;
  return node / block;
}

double block_cut_percent(const Mesh& mesh, std::size_t parts) {
  if (mesh.edges.empty()) return 0.0;
  std::size_t cut = 0;
  for (const Edge& edge : mesh.edges) {
    cut += block_owner(edge.a, mesh.node_count(), parts) != block_owner(edge.b, mesh.node_count(), parts);
  }
  return 100.0 * static_cast<double>(cut) / static_cast<double>(mesh.edges.size());
}

}  // namespace squall::apps::unstructured
