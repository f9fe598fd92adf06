// SPDX-License-Identifier: BSD-3-Clause
// The statistics node 0 prints at finalize: one table across nodes (SQUALL_STATS=1), or every
// node's values side by side (SQUALL_STATS=nodes). Zeros are hidden in both, lines stay
// within 100 columns, and the program's handlers are listed apart from the runtime's.
#pragma once
#include <string>

#include "stats/job_counters.hpp"

namespace squall::stats {

// Each counter's total over nodes, its smallest and largest node value and the imbalance
// (largest / mean), grouped by layer; then the handlers' messages handled, the same way.
std::string summary_table(const job_counters& job, const std::string& date);

// Each nonzero counter and handler with one column per node (in blocks of eight nodes).
std::string per_node_table(const job_counters& job, const std::string& date);

}  // namespace squall::stats
