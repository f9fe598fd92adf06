// SPDX-License-Identifier: BSD-3-Clause
#include "exchange_input.hpp"

namespace squall::bench::chaos_exchange {

mesh_input make_mesh(mesh::MeshShape shape, std::uint64_t seed) {
  return {shape, seed, mesh::generate_mesh(shape, seed)};
}

node_values owner_value(std::int64_t g) {
  node_values out;
  for (std::size_t k = 0; k < out.v.size(); ++k) out.v[k] = static_cast<double>(g * 8 + static_cast<std::int64_t>(k));
  return out;
}

node_values edge_contribution() {
  node_values out;
  for (std::size_t k = 0; k < out.v.size(); ++k) out.v[k] = static_cast<double>(k + 1);
  return out;
}

node_values expected_sum(std::int64_t degree) {
  node_values out = edge_contribution();
  for (double& x : out.v) x *= static_cast<double>(degree);
  return out;
}

std::vector<std::int64_t> node_degrees(const mesh::Mesh& m) {
  std::vector<std::int64_t> degree(m.node_count(), 0);
  for (const mesh::Edge& e : m.edges) {
    ++degree[e.a];
    ++degree[e.b];
  }
  return degree;
}

}  // namespace squall::bench::chaos_exchange
