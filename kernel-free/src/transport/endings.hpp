// SPDX-License-Identifier: BSD-3-Clause
// The ending message: a node that ends abnormally tells each peer across the network the node
// it blames and why, so that its peers name the cause, not the sender's closing. The TCP
// transport sends and reads it as a frame (tcp/frames.hpp, kind_ending) once the job runs, the
// set-up's watch while the connections are made (tcp/setup_watch.hpp), and the UCX transport as
// a message of its own kind: one body, one reading of it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace squall {

// As network_hooks::lost and network_hooks::hears.
using lost_fn = std::function<void(int node, const std::string& why, std::uint32_t silent_ms)>;
using hears_fn = std::function<bool(int node, std::uint32_t silent_ms)>;

// The body: the blamed node (int32), for how long it had been silent when the verdict is
// that it went silent (uint32 ms: a watchdog heard nothing from it; 0: it ended), then why;
// cut to `max_body`.
std::vector<std::byte> ending_body(int lost_node, std::uint32_t silent_ms, const std::string& why, std::size_t max_body);

// Reports the ending frame `body` that node `from` sent to node `me`, in a job of `nodes`
// nodes, through `lost`: the node it blames, with who said so. A body that names no node of
// the job blames the sender. The sender is itself the one reported when it blames this node
// (after a cut link, node 0 was told "node 0 was lost" and its host's squallrun blamed it), or
// says that a node went silent which this node `hears` since: it is the one cut off from that
// node (hosts 0 and 2 cut apart, host 1 named the node of host 0 that host 2 no longer heard,
// and host 0, told so in turn, a node of host 1).
void report_ending(int me, int from, int nodes, std::span<const std::byte> body, const lost_fn& lost,
                   const hears_fn& hears);

}  // namespace squall
