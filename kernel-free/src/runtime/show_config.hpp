// SPDX-License-Identifier: BSD-3-Clause
// What a job's nodes say about their configuration at start-up: the SQUALL_* variables no
// part of Squall reads (likely misspellings), and with SQUALL_SHOW_CONFIG=1 every setting in
// force, where it came from, and what differs between nodes (binding, host-dependent
// defaults). Node 0 prints both, once for the job.
#pragma once
#include "runtime/binding.hpp"
#include "runtime/node.hpp"

namespace squall::rt {

// Node 0 warns of each unknown SQUALL_* variable in its environment, naming the closest
// known one.
void warn_unknown_variables(const node_runtime& nd);

// Collective, called by every node at the end of init: node 0's SQUALL_SHOW_CONFIG decides,
// and node 0 prints the table on stderr.
void show_config(const node_runtime& nd, const host_processors& host);

}  // namespace squall::rt
