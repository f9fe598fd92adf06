// SPDX-License-Identifier: BSD-3-Clause
// Every node's counters side by side, as node 0 holds them after finalize gathers them:
// each node encodes its snapshot (with its host name and how it reaches other hosts) into
// bytes, node 0 decodes them all.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <squall/stats.hpp>

namespace squall::stats {

using per_node = std::vector<std::uint64_t>;  // one value per node, in node order

struct job_handler {
  std::string name;
  bool internal = false;  // the runtime's or a library's own protocol, not the program's
  per_node sent, sent_bytes, received, received_bytes;
};

struct job_counters {
  int nodes = 0;
  std::vector<std::string> hosts;                      // each node's host name
  std::vector<std::string> networks;                   // each node's network transport ("" none)
  std::map<std::string, per_node, std::less<>> counters;  // a node that never had one: 0
  std::vector<job_handler> handlers;                   // in order of name
};

// What a node says of itself beside its counters.
struct node_facts {
  std::string host;
  std::string network;  // its network transport's description ("tcp", "ucx: tcp/eth0"), or ""
};

std::vector<std::byte> encode(const snapshot& s, const node_facts& facts);
// From every node's encoding, in node order; ends the process on bytes encode did not make.
job_counters decode(std::span<const std::vector<std::byte>> per_node_bytes);

std::uint64_t total(const per_node& values);

}  // namespace squall::stats
