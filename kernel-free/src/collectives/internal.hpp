// SPDX-License-Identifier: BSD-3-Clause
// Collective steps the runtime itself uses.
#pragma once
#include <cstddef>
#include <span>
#include <vector>

namespace squall::detail {
// The barrier of finalize, distinct from barrier() so that a node finalizing while
// another waits in a barrier is reported as a mismatch instead of passing. Returns whether
// any node passed `flag` true (whether some node asked for statistics).
bool finalize_barrier(bool flag);
// Every node's bytes (of any size, each its own), collected on node 0 in node order; the
// other nodes get an empty list. Finalize uses it for the statistics.
std::vector<std::vector<std::byte>> gather_bytes(std::span<const std::byte> mine);
// All-to-all: outgoing[d] (one per node, may be empty) goes to node d; returns incoming[s],
// what node s sent here. Every pair exchanges one message, empty or not: for set-up steps
// (building communication patterns), not for moving data. `api` names the caller in errors.
std::vector<std::vector<std::byte>> exchange_bytes(std::vector<std::vector<std::byte>> outgoing, const char* api);
}
