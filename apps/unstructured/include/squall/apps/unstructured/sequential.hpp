// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The sequential reference: the flow computation over a whole mesh on one processor.
#include <span>
#include <vector>

#include "squall/apps/checksum.hpp"
#include "squall/apps/phase_timer.hpp"
#include "squall/apps/unstructured/flow.hpp"

namespace squall::apps::unstructured {

struct FlowState {
  std::vector<EdgeWeights> edge_weights;
  std::vector<double> face_weights;
  std::vector<double> node_weight;
  std::vector<NodeValues> values;
  std::vector<NodeValues> residual;
};

// Geometry weights, node weights and initial values for `mesh`.
FlowState prepare_flow(const Mesh& mesh, const FlowParameters& parameters);

// One iteration; the timer gets the phases "node loops", "edge loop" and "face loop".
void run_iteration(const Mesh& mesh, const FlowParameters& parameters, FlowState& state,
                   PhaseTimer& timer);

// Every value in node-name order, quantised to 1e-12.
Checksum checksum_values(std::span<const NodeValues> values);

}  // namespace squall::apps::unstructured
