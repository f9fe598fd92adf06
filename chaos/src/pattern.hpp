// SPDX-License-Identifier: BSD-3-Clause
// A communication pattern: what this node sends to and receives from each peer in one
// execution, as positions in the sending and the receiving array. A schedule holds one
// (gather runs it forwards, scatter backwards); a remap plan holds one plus local copies.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include <squall/chaos/schedule.hpp>

#include "call_order.hpp"

namespace squall::chaos::detail {

struct peer_lists {
  int node = -1;
  std::vector<index> send;  // positions this node packs for the peer, in order
  std::vector<index> recv;  // positions the peer's elements land in here, in the same order
};

struct pattern {
  std::uint64_t id = 0;  // the same on every node: patterns are built collectively, in order
  std::vector<peer_lists> peers;  // only peers with something to send or receive, by node
  std::vector<std::pair<index, index>> local;  // (from, to) copies within this node

  index highest_send = -1, highest_recv = -1;  // bounds checks for the arrays given

  void finish_bounds();
  static std::shared_ptr<pattern> make();  // with the next id
};

// The id the next collectively built pattern gets.
std::uint64_t next_pattern_id();

struct execution_arrays {
  array_ref from, to;  // gather: both the data array; remap: in and out
  combine_fn op;       // scatter_op only
  bool reverse = false;  // scatter: send the recv positions, receive into the send positions
  call_kind kind = call_kind::remap;  // what the messages name the call
};

// Starts one execution of the pattern; end() waits for it and frees it.
pending* begin_pattern(const std::shared_ptr<pattern>& p, execution_arrays arrays);

}  // namespace squall::chaos::detail
