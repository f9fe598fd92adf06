// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/unstructured/sequential.hpp"

namespace squall::apps::unstructured {

FlowState prepare_flow(const Mesh& mesh, const FlowParameters& parameters) {
  FlowState state;
  state.edge_weights.resize(mesh.edges.size());
  state.face_weights.resize(mesh.faces.size());
  state.node_weight.assign(mesh.node_count(), 0.0);
  state.values.resize(mesh.node_count());
  state.residual.resize(mesh.node_count());
  compute_edge_weights(mesh.edges, mesh.coords, parameters, state.edge_weights);
  compute_face_weights(mesh.faces, mesh.coords, parameters, state.face_weights);
  accumulate_edge_node_weights(mesh.edges, state.edge_weights, state.node_weight);
  accumulate_face_node_weights(mesh.faces, state.face_weights, state.node_weight);
  initial_values(mesh.coords, state.values);
  return state;
}

void run_iteration(const Mesh& mesh, const FlowParameters& parameters, FlowState& state,
                   PhaseTimer& timer) {
  {
    auto scope = timer.time("node loops");
    reset_residuals(state.residual);
  }
  {
    auto scope = timer.time("edge loop");
    accumulate_edge_fluxes(mesh.edges, state.edge_weights, state.values, state.residual);
  }
  {
    auto scope = timer.time("face loop");
    accumulate_face_fluxes(mesh.faces, state.face_weights, parameters.free_stream, state.values,
                           state.residual);
  }
  {
    auto scope = timer.time("node loops");
    update_values(state.residual, state.node_weight, state.values);
  }
}

Checksum checksum_values(std::span<const NodeValues> values) {
  Checksum checksum;
  for (const NodeValues& node : values) {
    for (double value : node) checksum.add_quantised(value, 1e-12);
  }
  return checksum;
}

}  // namespace squall::apps::unstructured
