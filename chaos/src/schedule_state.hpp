// SPDX-License-Identifier: BSD-3-Clause
// What a schedule is: a pattern (owners send the elements ghosts copy) and the ghost area
// it fills.
#pragma once
#include <memory>
#include <unordered_map>

#include <squall/chaos/schedule.hpp>

#include "pattern.hpp"

namespace squall::chaos {

struct schedule::state {
  std::shared_ptr<detail::pattern> pat;  // send: owned offsets; recv: ghost slots
  index local_size = 0, ghost_begin = 0, ghost_end = 0;
  // Global index -> ghost slot, for every element this schedule and those it was built on
  // fetch: an incremental inspector reuses these slots.
  std::unordered_map<index, index> ghost_of;
};

}  // namespace squall::chaos
