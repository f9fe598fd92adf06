// SPDX-License-Identifier: BSD-3-Clause
// The ending frame (frames.hpp, kind_ending): a node that ends abnormally tells each peer
// the node it blames and why, so that its peers name the cause, not the sender's closing.
// The TCP transport sends and reads it once the job runs, and the set-up's watch while the
// connections are made (setup_watch.hpp): one body, one reading of it.
#pragma once
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace squall::tcp {

// The body: the blamed node (int32), then why; cut to `max_body` bytes.
std::vector<std::byte> ending_body(int lost_node, const std::string& why, std::size_t max_body);

// Reports the ending frame `body` that node `from` sent to node `me`, in a job of `nodes`
// nodes, through `lost` (network_hooks::lost): the node it blames, with who said so. A
// peer that blames this node is itself the one lost to it (after a cut link, node 0 was told
// "node 0 was lost" and its host's squallrun blamed it); a body that names no node of the
// job blames the sender.
void report_ending(int me, int from, int nodes, std::span<const std::byte> body,
                   const std::function<void(int node, const std::string& why)>& lost);

}  // namespace squall::tcp
