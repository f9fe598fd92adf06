// SPDX-License-Identifier: BSD-3-Clause
// CHAOS's communication patterns: the substrate's description (squall/pattern.hpp) with the
// id that names it in messages. A schedule holds one (gather runs it forwards, scatter
// backwards); a remap plan holds one with local copies.
#pragma once
#include <cstdint>
#include <memory>

#include <squall/chaos/schedule.hpp>
#include <squall/pattern.hpp>

#include "call_order.hpp"

namespace squall::chaos::detail {

using squall::peer_lists;

struct pattern : squall::comm_pattern {
  std::uint64_t id = 0;  // the same on every node: patterns are built collectively, in order
  static std::shared_ptr<pattern> make(squall::comm_pattern lists = {});  // with the next id
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
