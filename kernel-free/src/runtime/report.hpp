// SPDX-License-Identifier: BSD-3-Clause
// The statistics of SQUALL_STATS at finalize: every node sends its counters to node 0,
// which prints them as one table across nodes, per node, or writes them as JSON
// (stats/forms.hpp).
#pragma once
#include <string>

#include "runtime/node.hpp"

namespace squall::rt {
// At init, so that a long run does not end unable to write its JSON: ends the process
// when node 0 could not write the file SQUALL_STATS names.
void check_report_file(const node_runtime& nd);
// Collective, at finalize once some node asked for statistics (node 0 prints the table
// when only other nodes asked). Returns why the JSON file could not be written ("" when it
// was, or none was asked for): finalize ends the process with it once the job is done.
std::string report(const node_runtime& nd);
}  // namespace squall::rt
