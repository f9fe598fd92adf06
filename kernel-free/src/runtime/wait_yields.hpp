// SPDX-License-Identifier: BSD-3-Clause
// The yields of a spinning wait in a job with more nodes on a host than processors
// (wait_yields.cpp): to this job's other nodes, but not to another program computing on the
// same processors.
#pragma once
#include <cstdint>

#include "runtime/node.hpp"

namespace squall::rt {

// Called by a spinning wait every 64 turns, `now` the time it just read: yields the
// processor unless recent yields went to another program.
void yield_in_wait(const node_runtime& nd, std::int64_t now);

}  // namespace squall::rt
