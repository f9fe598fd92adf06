// The statistics report SQUALL_STATS=1 prints at finalize.
#pragma once
#include "runtime/node.hpp"

namespace squall::rt {
// Prints every node's counters, one node after another (collective).
void print_report(node_runtime& nd);
}
