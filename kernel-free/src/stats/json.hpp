// SPDX-License-Identifier: BSD-3-Clause
// SQUALL_STATS=json:FILE: every node's every counter, zeros included, for scripts.
//   {"host": node 0's host, "hosts": [each node's], "nodes": N, "date": "2025-01-31T12:00:00Z",
//    "counters": {"am.packets_sent": [node 0's value, node 1's, ...], ...},
//    "handlers": [{"name": ..., "internal": false, "sent": [...], "sent_bytes": [...],
//                  "received": [...], "received_bytes": [...]}, ...]}
#pragma once
#include <string>

#include "stats/job_counters.hpp"

namespace squall::stats {

std::string to_json(const job_counters& job, const std::string& iso_date);

}  // namespace squall::stats
