// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/unstructured/reference_check.hpp"

#include <algorithm>
#include <cmath>

namespace squall::apps::unstructured {
namespace {

double total_of(std::span<const NodeValues> values) {
  double total = 0;
  for (const NodeValues& node : values) {
    for (double value : node) total += value;
  }
  return total;
}

}  // namespace

ReferenceRun run_reference(const Mesh& mesh, std::size_t iterations) {
  const FlowParameters parameters;
  ReferenceRun run{prepare_flow(mesh, parameters)};
  PhaseTimer loops;
  for (std::size_t i = 0; i < iterations; ++i) run_iteration(mesh, parameters, run.state, loops);
  run.seconds = loops.compute_seconds();
  return run;
}

ReferenceCheck check_against_reference(const Mesh& mesh, std::size_t iterations,
                                       std::span<const NodeValues> values) {
  const ReferenceRun run = run_reference(mesh, iterations);
  const FlowState& reference = run.state;

  ReferenceCheck check;
  check.reference_seconds = run.seconds;
  check.value_total = total_of(values);
  check.reference_total = total_of(reference.values);
  check.checksum = checksum_values(values).hex();
  check.reference_checksum = checksum_values(reference.values).hex();
  if (values.size() != reference.values.size()) return check;
  for (std::size_t n = 0; n < values.size(); ++n) {
    for (int k = 0; k < kVariables; ++k) {
      check.max_abs_difference =
          std::max(check.max_abs_difference, std::abs(values[n][k] - reference.values[n][k]));
    }
  }
  const double total_tolerance = kValueTolerance * static_cast<double>(values.size());
  check.ok = check.checksum == check.reference_checksum ||
             (check.max_abs_difference <= kValueTolerance &&
              std::abs(check.value_total - check.reference_total) <= total_tolerance);
  return check;
}

void add_check_figures(Figures& figures, const ReferenceCheck& check) {
  figures.add("value_total", check.value_total);
  figures.add("reference_total", check.reference_total);
  figures.add("max_abs_difference", check.max_abs_difference);
  figures.add("checksum", check.checksum);
  figures.add("reference_checksum", check.reference_checksum);
}

}  // namespace squall::apps::unstructured
