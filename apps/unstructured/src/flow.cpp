// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/unstructured/flow.hpp"

#include <algorithm>
#include <cmath>

namespace squall::apps::unstructured {

void compute_edge_weights(std::span<const Edge> edges, std::span<const Vec3> coords,
                          const FlowParameters& parameters, std::span<EdgeWeights> out) {
  for (std::size_t e = 0; e < edges.size(); ++e) {
    const Vec3 along = coords[edges[e].b] - coords[edges[e].a];
    const double length2 = norm2(along);
    const double transport = dot(parameters.stream, along) / length2;  // > 0: flows a -> b
    const double diffusion = parameters.diffusion / length2;
    out[e] = {diffusion + std::max(0.0, -transport), diffusion + std::max(0.0, transport)};
  }
}

void compute_face_weights(std::span<const Face> faces, std::span<const Vec3> coords,
                          const FlowParameters& parameters, std::span<double> out) {
  for (std::size_t f = 0; f < faces.size(); ++f) {
    const auto& n = faces[f].nodes;
    const double area =
        0.5 * std::sqrt(norm2(cross(coords[n[1]] - coords[n[0]], coords[n[2]] - coords[n[0]])));
    out[f] = parameters.boundary_coupling * area / 3.0;
  }
}

void accumulate_edge_node_weights(std::span<const Edge> edges, std::span<const EdgeWeights> weights,
                                  std::span<double> node_weight) {
  for (std::size_t e = 0; e < edges.size(); ++e) {
    node_weight[edges[e].a] += weights[e].into_a;
    node_weight[edges[e].b] += weights[e].into_b;
  }
}

void accumulate_face_node_weights(std::span<const Face> faces, std::span<const double> weights,
                                  std::span<double> node_weight) {
  for (std::size_t f = 0; f < faces.size(); ++f) {
    for (NodeId node : faces[f].nodes) node_weight[node] += weights[f];
  }
}

void initial_values(std::span<const Vec3> coords, std::span<NodeValues> values) {
  for (std::size_t n = 0; n < coords.size(); ++n) {
    const Vec3& p = coords[n];
    for (int k = 0; k < kVariables; ++k) {
      values[n][k] = 1.0 + 0.5 * std::sin(0.3 * (k + 1) * p.x + 0.2 * p.y - 0.1 * (k + 1) * p.z + k);
    }
  }
}

void reset_residuals(std::span<NodeValues> residual) {
  std::fill(residual.begin(), residual.end(), NodeValues{});
}

void accumulate_edge_fluxes(std::span<const Edge> edges, std::span<const EdgeWeights> weights,
                            std::span<const NodeValues> values, std::span<NodeValues> residual) {
  for (std::size_t e = 0; e < edges.size(); ++e) {
    const NodeValues& at_a = values[edges[e].a];
    const NodeValues& at_b = values[edges[e].b];
    NodeValues& into_a = residual[edges[e].a];
    NodeValues& into_b = residual[edges[e].b];
    for (int k = 0; k < kVariables; ++k) {
      const double difference = at_b[k] - at_a[k];
      into_a[k] += weights[e].into_a * difference;
      into_b[k] -= weights[e].into_b * difference;
    }
  }
}

void accumulate_face_fluxes(std::span<const Face> faces, std::span<const double> weights,
                            const NodeValues& free_stream, std::span<const NodeValues> values,
                            std::span<NodeValues> residual) {
  for (std::size_t f = 0; f < faces.size(); ++f) {
    for (NodeId node : faces[f].nodes) {
      for (int k = 0; k < kVariables; ++k) {
        residual[node][k] += weights[f] * (free_stream[k] - values[node][k]);
      }
    }
  }
}

void update_values(std::span<const NodeValues> residual, std::span<const double> node_weight,
                   std::span<NodeValues> values) {
  for (std::size_t n = 0; n < values.size(); ++n) {
    const double scale = 0.5 / node_weight[n];
    for (int k = 0; k < kVariables; ++k) values[n][k] += scale * residual[n][k];
  }
}

}  // namespace squall::apps::unstructured
