// SPDX-License-Identifier: BSD-3-Clause
// unstructured: the generated mesh's statistics and validity, and the flow computation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "squall/apps/unstructured/block_cut.hpp"
#include "squall/apps/unstructured/mesh_generator.hpp"
#include "squall/apps/unstructured/sequential.hpp"

namespace squall::apps::unstructured {
namespace {

using EdgeKey = std::pair<NodeId, NodeId>;
EdgeKey key(NodeId a, NodeId b) { return {std::min(a, b), std::max(a, b)}; }

double relative_error(std::size_t got, std::size_t want) {
  return std::abs(static_cast<double>(got) - static_cast<double>(want)) / static_cast<double>(want);
}

const Mesh& paper_mesh() {
  static const Mesh mesh = generate_mesh(kPaperShape, 1);
  return mesh;
}

TEST(UnstructuredMesh, PaperShapeIsTable1WithinOnePercent) {
  EXPECT_EQ(shape_for_nodes(kPaperNodes), kPaperShape);
  const Mesh& mesh = paper_mesh();
  EXPECT_LT(relative_error(mesh.node_count(), 9428), 0.01);
  EXPECT_LT(relative_error(mesh.edges.size(), 59863), 0.01);
  EXPECT_LT(relative_error(mesh.faces.size(), 5864), 0.01);
}

TEST(UnstructuredMesh, BlockPartitionOfNamesCutsAlmostEveryEdge) {
  EXPECT_GT(block_cut_percent(paper_mesh(), 32), 90.0);
  EXPECT_EQ(block_cut_percent(paper_mesh(), 1), 0.0);
  EXPECT_EQ(block_owner(9424, 9425, 32), 31u);
}

TEST(UnstructuredMesh, GeneratorMatchesClosedFormCounts) {
  for (const MeshShape& shape : {kPaperShape, MeshShape{{3, 2, 2}, {0, 0, 0}},
                                 MeshShape{{6, 5, 4}, {2, 3, 1}}, MeshShape{{7, 7, 7}, {3, 3, 3}}}) {
    const Mesh mesh = generate_mesh(shape, 3);
    EXPECT_EQ((MeshCounts{mesh.node_count(), mesh.edges.size(), mesh.faces.size()}),
              expected_counts(shape));
  }
  // One cube: 8 nodes, 19 edges (12 sides, 6 face diagonals, 1 main diagonal), 12 triangles.
  EXPECT_EQ(expected_counts({{1, 1, 1}, {0, 0, 0}}), (MeshCounts{8, 19, 12}));
}

TEST(UnstructuredMesh, SmallerRequestedSizesComeClose) {
  for (std::size_t nodes : {600, 2000, 5000}) {
    const Mesh mesh = generate_mesh(shape_for_nodes(nodes), 1);
    EXPECT_LT(relative_error(mesh.node_count(), nodes), 0.1) << nodes;
    // The edges-per-node ratio stays near the paper's 6.35 (a little lower on small meshes,
    // which have more boundary).
    const double ratio = static_cast<double>(mesh.edges.size()) / static_cast<double>(mesh.node_count());
    EXPECT_GT(ratio, 5.0);
    EXPECT_LT(ratio, 7.0);
  }
}

TEST(UnstructuredMesh, IsAValidMeshWithAClosedBoundary) {
  const Mesh mesh = generate_mesh({{8, 6, 5}, {3, 2, 1}}, 9);
  std::set<EdgeKey> edges;
  std::vector<int> degree(mesh.node_count());
  for (const Edge& e : mesh.edges) {
    ASSERT_LT(e.a, mesh.node_count());
    ASSERT_LT(e.b, mesh.node_count());
    ASSERT_NE(e.a, e.b);
    EXPECT_TRUE(edges.insert(key(e.a, e.b)).second) << "duplicate edge";
    ++degree[e.a];
    ++degree[e.b];
    // At most a main diagonal, sqrt(3), stretched by the jitter of both ends.
    EXPECT_LT(std::sqrt(norm2(mesh.coords[e.a] - mesh.coords[e.b])), 1.3 * std::sqrt(3.0));
  }
  EXPECT_GT(*std::min_element(degree.begin(), degree.end()), 0);
  // Every face is a triangle of mesh edges, and every boundary edge borders exactly two faces
  // (the boundary is closed: the outer box and the hole's surface).
  std::map<EdgeKey, int> faces_per_edge;
  std::set<NodeId> boundary_nodes;
  for (const Face& f : mesh.faces) {
    for (int i = 0; i < 3; ++i) {
      const NodeId a = f.nodes[i], b = f.nodes[(i + 1) % 3];
      ASSERT_TRUE(edges.count(key(a, b))) << "face side is not an edge";
      ++faces_per_edge[key(a, b)];
      boundary_nodes.insert(a);
    }
  }
  for (const auto& [edge, count] : faces_per_edge) EXPECT_EQ(count, 2);
  // Euler characteristic of two closed surfaces (box and hole): V - E + F = 4.
  const auto euler = static_cast<long>(boundary_nodes.size()) - static_cast<long>(faces_per_edge.size()) +
                     static_cast<long>(mesh.faces.size());
  EXPECT_EQ(euler, 4);
}

TEST(UnstructuredMesh, IsDeterministicForASeed) {
  const MeshShape shape{{5, 4, 4}, {1, 2, 2}};
  const Mesh a = generate_mesh(shape, 42), b = generate_mesh(shape, 42), c = generate_mesh(shape, 43);
  ASSERT_EQ(a.edges.size(), b.edges.size());
  for (std::size_t e = 0; e < a.edges.size(); ++e) {
    EXPECT_EQ(a.edges[e].a, b.edges[e].a);
    EXPECT_EQ(a.edges[e].b, b.edges[e].b);
  }
  EXPECT_EQ(a.coords, b.coords);
  EXPECT_NE(a.coords, c.coords);
}

// The residual of one node gathered from its incident edges and faces, in incidence order.
NodeValues direct_residual(const Mesh& mesh, const FlowState& state, const FlowParameters& parameters,
                           NodeId node) {
  NodeValues sum{};
  for (std::size_t e = 0; e < mesh.edges.size(); ++e) {
    const Edge& edge = mesh.edges[e];
    if (edge.a != node && edge.b != node) continue;
    const NodeId other = edge.a == node ? edge.b : edge.a;
    const double weight = edge.a == node ? state.edge_weights[e].into_a : state.edge_weights[e].into_b;
    for (int k = 0; k < kVariables; ++k) sum[k] += weight * (state.values[other][k] - state.values[node][k]);
  }
  for (std::size_t f = 0; f < mesh.faces.size(); ++f) {
    for (NodeId n : mesh.faces[f].nodes) {
      if (n != node) continue;
      for (int k = 0; k < kVariables; ++k) {
        sum[k] += state.face_weights[f] * (parameters.free_stream[k] - state.values[node][k]);
      }
    }
  }
  return sum;
}

TEST(UnstructuredFlow, ReductionEqualsDirectPerNodeSum) {
  const Mesh mesh = generate_mesh({{6, 5, 4}, {2, 3, 1}}, 5);
  const FlowParameters parameters;
  FlowState state = prepare_flow(mesh, parameters);
  PhaseTimer timer;
  run_iteration(mesh, parameters, state, timer);  // values no longer the smooth initial field
  reset_residuals(state.residual);
  accumulate_edge_fluxes(mesh.edges, state.edge_weights, state.values, state.residual);
  accumulate_face_fluxes(mesh.faces, state.face_weights, parameters.free_stream, state.values,
                         state.residual);
  double largest = 0;
  for (NodeId node = 0; node < mesh.node_count(); ++node) {
    const NodeValues direct = direct_residual(mesh, state, parameters, node);
    for (int k = 0; k < kVariables; ++k) {
      EXPECT_NEAR(state.residual[node][k], direct[k], 1e-12 * (1 + std::abs(direct[k])));
      largest = std::max(largest, std::abs(direct[k]));
    }
  }
  EXPECT_GT(largest, 1e-3);  // the comparison is not between zeros
}

TEST(UnstructuredFlow, EdgeListSplitAnywhereGivesTheSameReduction) {
  const Mesh mesh = generate_mesh({{5, 5, 5}, {0, 0, 0}}, 2);
  const FlowParameters parameters;
  FlowState state = prepare_flow(mesh, parameters);
  reset_residuals(state.residual);
  accumulate_edge_fluxes(mesh.edges, state.edge_weights, state.values, state.residual);
  // Two "processors" each reduce half of the edges into a private array, then add them up.
  const std::size_t half = mesh.edges.size() / 2;
  std::vector<NodeValues> first(mesh.node_count()), second(mesh.node_count());
  const std::span<const Edge> edges(mesh.edges);
  const std::span<const EdgeWeights> weights(state.edge_weights);
  accumulate_edge_fluxes(edges.first(half), weights.first(half), state.values, first);
  accumulate_edge_fluxes(edges.subspan(half), weights.subspan(half), state.values, second);
  for (std::size_t n = 0; n < mesh.node_count(); ++n) {
    for (int k = 0; k < kVariables; ++k) {
      EXPECT_NEAR(first[n][k] + second[n][k], state.residual[n][k], 1e-12);
    }
  }
}

TEST(UnstructuredFlow, NodeWeightIsTheSumOfIncidentWeights) {
  const Mesh mesh = generate_mesh({{4, 4, 3}, {0, 0, 0}}, 8);
  const FlowState state = prepare_flow(mesh, FlowParameters{});
  std::vector<double> direct(mesh.node_count());
  for (std::size_t e = 0; e < mesh.edges.size(); ++e) {
    direct[mesh.edges[e].a] += state.edge_weights[e].into_a;
    direct[mesh.edges[e].b] += state.edge_weights[e].into_b;
  }
  for (std::size_t f = 0; f < mesh.faces.size(); ++f) {
    for (NodeId n : mesh.faces[f].nodes) direct[n] += state.face_weights[f];
  }
  for (std::size_t n = 0; n < mesh.node_count(); ++n) {
    EXPECT_GT(state.node_weight[n], 0.0);
    EXPECT_NEAR(state.node_weight[n], direct[n], 1e-12 * direct[n]);
  }
}

// Every value stays between the extremes of the initial values and the free stream, and the
// computation does move the values.
void expect_bounded_over(const Mesh& mesh, int iterations) {
  const FlowParameters parameters;
  FlowState state = prepare_flow(mesh, parameters);
  double low = *std::min_element(parameters.free_stream.begin(), parameters.free_stream.end());
  double high = *std::max_element(parameters.free_stream.begin(), parameters.free_stream.end());
  for (const NodeValues& node : state.values) {
    low = std::min(low, *std::min_element(node.begin(), node.end()));
    high = std::max(high, *std::max_element(node.begin(), node.end()));
  }
  const std::vector<NodeValues> initial = state.values;
  PhaseTimer timer;
  for (int i = 0; i < iterations; ++i) {
    run_iteration(mesh, parameters, state, timer);
    for (const NodeValues& node : state.values) {
      for (double value : node) {
        ASSERT_GE(value, low - 1e-12) << "iteration " << i;
        ASSERT_LE(value, high + 1e-12) << "iteration " << i;
      }
    }
  }
  double change = 0;
  for (std::size_t n = 0; n < mesh.node_count(); ++n) {
    for (int k = 0; k < kVariables; ++k) change = std::max(change, std::abs(state.values[n][k] - initial[n][k]));
  }
  EXPECT_GT(change, 0.05);
}

TEST(UnstructuredFlow, ValuesStayBoundedOnThePaperMesh) { expect_bounded_over(paper_mesh(), 50); }

TEST(UnstructuredFlow, ChecksumIsStableAcrossRunsAndBuilds) {
  const Mesh mesh = generate_mesh(shape_for_nodes(1000), 1);
  auto run = [&] {
    const FlowParameters parameters;
    FlowState state = prepare_flow(mesh, parameters);
    PhaseTimer timer;
    for (int i = 0; i < 50; ++i) run_iteration(mesh, parameters, state, timer);
    return checksum_values(state.values).hex();
  };
  const std::string first = run();
  EXPECT_EQ(run(), first);
  // Pinned: the same in optimised and sanitizer (-O0) builds.
  EXPECT_EQ(first, "b6bd39ec112918bf");
}

}  // namespace
}  // namespace squall::apps::unstructured
