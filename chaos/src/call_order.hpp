// SPDX-License-Identifier: BSD-3-Clause
// Every node makes the same executor calls (schedule executions, remaps, exchanges) in the
// same order. Each node numbers its calls 0, 1, 2, ... and every message names its call's
// number and kind, so a node that skipped or added a call, or called another one, ends the
// job with a message naming both nodes' calls instead of hanging or mixing data:
// - a message whose call differs from this node's call of that number (checked when it
//   arrives, or when this node begins that call if it came early);
// - a message for a call this node has already ended (it expected nothing more);
// - a node waiting for a peer asks it, after a while and then periodically, where it
//   stands: a peer whose call of that number is another, or that has gone on to a
//   collective this node reaches only after the call, is a mismatch. A peer that has not
//   got there yet is simply waited for (it may be computing).
// Not caught: a node that skips or adds a call in which it exchanges no message with any
// node, as long as no node later waits for it across the gap - its later calls are then
// numbered one off, which the first message, wait or collective that crosses them finds.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

namespace squall::chaos::detail {

enum class call_kind : std::uint32_t { gather = 1, scatter, scatter_op, remap, exchange };

struct call_desc {
  call_kind kind = call_kind::exchange;
  std::uint64_t pattern = 0;  // the schedule's or plan's pattern id (0 for an exchange)
  bool operator==(const call_desc&) const = default;
};

// Numbers this node's next call and checks the messages for that number that came early.
std::uint64_t begin_call(call_desc d);
void end_call(std::uint64_t seq);

// For each arriving message (from a handler): ends the job if it does not belong here.
void check_arrival(int source, std::uint64_t seq, call_desc theirs);

// Waits (am::wait_until) until done() holds, which runs under the node lock. While it does
// not, asks the nodes missing() names (also under the node lock) where they stand.
void wait_for_call(std::uint64_t seq, const std::function<bool()>& done, const std::function<std::vector<int>()>& missing);

}  // namespace squall::chaos::detail
