// SPDX-License-Identifier: BSD-3-Clause
// A channel set's state on one node, and the messages of its protocol (squall/channel.hpp).
#pragma once
#include <squall/am.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace squall::detail {

// What this node receives from one peer. `extent` and `ended_through` are written by the
// data handler, and by the program thread only while the peer holds no credit to write.
struct channel_in {
  std::byte* buffer = nullptr;
  std::size_t capacity = 0;
  std::size_t extent = 0;                      // end of the furthest write this round
  std::atomic<std::uint64_t> ended_through{0};  // r + 1 once the peer ended round r
};

// What this node sends to one peer.
struct channel_out {
  std::size_t capacity = 0;                // the peer's buffer for this node
  std::atomic<std::uint64_t> granted{0};   // the latest round the peer lets this node write
  bool ended = false;                      // this node ended the current round towards it
};

struct channel_state {
  std::uint32_t id = 0;  // the same on every node: sets are made collectively, in order
  int me = 0, n = 0;
  std::atomic<std::uint64_t> round{0};  // read by the handlers' checks
  bool open = false;                    // round `round` has begun on this node
  std::unique_ptr<std::byte[]> storage;
  std::unique_ptr<channel_in[]> in;
  std::unique_ptr<channel_out[]> out;
};

// The registry the handlers find a set in, by id. Both run under the node lock.
std::uint32_t register_channel_set(channel_state* s);
void unregister_channel_set(std::uint32_t id);

// The protocol's messages. Data lands at `offset` of dest's buffer for this node; `last`
// ends this node's round towards dest. A credit lets dest write `round` to this node.
void send_channel_data(const channel_state& s, int dest, std::size_t offset, am::payload data, bool last);
void send_channel_credit(const channel_state& s, int dest);

}  // namespace squall::detail
