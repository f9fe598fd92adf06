// SPDX-License-Identifier: BSD-3-Clause
// The library's access to the private parts of the public handle types.
#pragma once
#include <squall/error.hpp>
#include <squall/memory.hpp>

#include "memory/segment_table.hpp"

namespace squall::memory {

class segment_builder {
 public:
  static segment handle(const detail::segment_state& s) { return segment(s.index, s.generation); }
  // The live segment a handle names; usage_error naming `api` if it is null or freed.
  static detail::segment_state& state(segment h, const char* api);
  // Fills in the homes of a segment whose blocks and nodes are set.
  static void set_homes(detail::segment_state& s, const home_policy& policy);
};

}  // namespace squall::memory
