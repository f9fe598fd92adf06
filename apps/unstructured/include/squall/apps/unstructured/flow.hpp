// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The computation: a monotone flux update of five values per node (diffusion along edges,
// upwind transport by a uniform stream, relaxation of boundary nodes towards the free stream).
//
// Every kernel is one loop of the paper's pattern over the items it is given: node kernels over
// a span of nodes, edge and face kernels over an explicit list of edges or faces whose node
// indices address the node arrays passed in. Edge and face kernels add into both ends (the
// reduction of the paper's figure 2), in list order. A parallel version passes its own part of
// the lists (localised to its own numbering if it likes) and reduces the partial residuals.
//
// Each node's update is a convex combination of its own and its neighbours' values (and the
// free stream), so every value stays between the extremes of the initial values and the free
// stream.
#include <array>
#include <span>

#include "squall/apps/unstructured/mesh.hpp"

namespace squall::apps::unstructured {

inline constexpr int kVariables = 5;
using NodeValues = std::array<double, kVariables>;

struct FlowParameters {
  Vec3 stream{1.0, 0.2, 0.0};  // transport velocity
  double diffusion = 0.5;
  double boundary_coupling = 1.0;  // per unit face area
  NodeValues free_stream{1.0, 1.2, 0.8, 1.1, 0.9};
};

// Nonnegative weights with which each end of an edge takes in the other's value.
struct EdgeWeights {
  double into_a, into_b;
};

// Geometry, computed once: per edge, per face (its share for each of its three nodes).
void compute_edge_weights(std::span<const Edge> edges, std::span<const Vec3> coords,
                          const FlowParameters& parameters, std::span<EdgeWeights> out);
void compute_face_weights(std::span<const Face> faces, std::span<const Vec3> coords,
                          const FlowParameters& parameters, std::span<double> out);

// Each node's total incoming weight (a reduction over edges and faces); the update divides by it.
void accumulate_edge_node_weights(std::span<const Edge> edges, std::span<const EdgeWeights> weights,
                                  std::span<double> node_weight);
void accumulate_face_node_weights(std::span<const Face> faces, std::span<const double> weights,
                                  std::span<double> node_weight);

// Starting values: smooth fields of the coordinates, within [0.5, 1.5].
void initial_values(std::span<const Vec3> coords, std::span<NodeValues> values);

// One iteration: reset residuals (nodes), edge fluxes, face fluxes, update (nodes).
void reset_residuals(std::span<NodeValues> residual);
void accumulate_edge_fluxes(std::span<const Edge> edges, std::span<const EdgeWeights> weights,
                            std::span<const NodeValues> values, std::span<NodeValues> residual);
void accumulate_face_fluxes(std::span<const Face> faces, std::span<const double> weights,
                            const NodeValues& free_stream, std::span<const NodeValues> values,
                            std::span<NodeValues> residual);
// values += residual / (2 * node_weight): the factor 2 keeps half of each node's own value.
void update_values(std::span<const NodeValues> residual, std::span<const double> node_weight,
                   std::span<NodeValues> values);

}  // namespace squall::apps::unstructured
