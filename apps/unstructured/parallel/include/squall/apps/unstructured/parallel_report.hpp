// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The end of every Squall version of unstructured: every node's final values gathered by name,
// checked on node 0 against the sequential reference, and the contract's figures printed there.
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "squall/apps/figures.hpp"
#include "squall/apps/phase_timer.hpp"
#include "squall/apps/squall_counts.hpp"
#include "squall/apps/unstructured/flow.hpp"
#include "squall/apps/unstructured/mesh.hpp"
#include "squall/apps/unstructured/run_options.hpp"

namespace squall::apps::unstructured {

struct ParallelRun {
  std::string version;                     // "chaos", "xsm_direct_reduction", ...
  std::span<const NodeValues> owned;       // this node's final values
  std::span<const std::int64_t> names;     // their mesh node names
  const CountedRegion* region = nullptr;   // the timed region, ended
  const PhaseTimer* phases = nullptr;      // this node's phases (reported as the slowest node's)
  double cut_edges_pct = 0;
};

// Collective. `add_own` adds the version's own figures (node 0 only). Returns the exit
// status: 0 when the result matches the reference, 1 when not (on node 0; 0 elsewhere).
int report_parallel_run(const Mesh& mesh, const RunOptions& options, const ParallelRun& run,
                        const std::function<void(Figures&)>& add_own);

}  // namespace squall::apps::unstructured
