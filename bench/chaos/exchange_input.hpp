// SPDX-License-Identifier: BSD-3-Clause
// What chaos_exchange moves, shared by its Squall and MPI programs: the paper's unstructured
// mesh, the per-node element (the flow kernel's five doubles), and the values both programs
// fill in and check, so that a wrong exchange fails the run instead of producing a figure.
#pragma once
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "squall/apps/unstructured/flow.hpp"
#include "squall/apps/unstructured/mesh.hpp"
#include "squall/apps/unstructured/mesh_generator.hpp"

namespace squall::bench::chaos_exchange {

namespace mesh = squall::apps::unstructured;

// One mesh node's values as unstructured's edge loop reads and updates them (kVariables
// doubles, 40 bytes). operator+ is what scatter_op's combine::add applies (and what the MPI
// side adds with). It is written as one aggregate of element sums: GCC at -O2 does not unroll
// a five-step loop, and the loop form (through the copies a combining function makes) ran
// about three times slower, in both programs alike.
struct node_values {
  std::array<double, mesh::kVariables> v{};

  friend node_values operator+(const node_values& a, const node_values& b) {
    return [&]<std::size_t... k>(std::index_sequence<k...>) {
      return node_values{{(a.v[k] + b.v[k])...}};
    }(std::make_index_sequence<mesh::kVariables>{});
  }
  friend bool operator==(const node_values&, const node_values&) = default;
};

// The mesh both programs build, from the same shape and seed.
struct mesh_input {
  mesh::MeshShape shape;
  std::uint64_t seed;
  mesh::Mesh mesh;
};
mesh_input make_mesh(mesh::MeshShape shape, std::uint64_t seed);

// What an owner holds for global node g before a gather (exact in a double).
node_values owner_value(std::int64_t g);

// What one edge adds into each of its two ends in the scatter check.
node_values edge_contribution();

// The scatter check's expected owner value for a node of `degree` edges (owners start at 0).
node_values expected_sum(std::int64_t degree);

// Edges at each node of the mesh.
std::vector<std::int64_t> node_degrees(const mesh::Mesh& m);

}  // namespace squall::bench::chaos_exchange
