// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// How a parallel version of unstructured checks its result: the final values of every node
// (by name) against the sequential reference computed in the same process from the same
// options. Parallel versions add the residuals in another order, so a value may differ from
// the reference's in the last bits: the result is ok when the checksums agree, or when every
// value is within kValueTolerance of the reference's and the totals within kValueTolerance
// times the node count.
#include <cstdint>
#include <span>
#include <string>

#include "squall/apps/figures.hpp"
#include "squall/apps/unstructured/flow.hpp"
#include "squall/apps/unstructured/mesh.hpp"
#include "squall/apps/unstructured/sequential.hpp"

namespace squall::apps::unstructured {

inline constexpr double kValueTolerance = 1e-9;

// The sequential reference from the same mesh and iterations, and the time of its iterations
// as unstructured_seq times them.
struct ReferenceRun {
  FlowState state;
  double seconds = 0;
};
ReferenceRun run_reference(const Mesh& mesh, std::size_t iterations);

struct ReferenceCheck {
  bool ok = false;
  double value_total = 0, reference_total = 0;
  double max_abs_difference = 0;
  std::string checksum, reference_checksum;
  double reference_seconds = 0;  // the reference's iterations, as unstructured_seq times them
};

// `values` holds every node's final values in node-name order.
ReferenceCheck check_against_reference(const Mesh& mesh, std::size_t iterations,
                                       std::span<const NodeValues> values);

// value_total, reference_total, max_abs_difference, checksum, reference_checksum.
void add_check_figures(Figures& figures, const ReferenceCheck& check);

}  // namespace squall::apps::unstructured
