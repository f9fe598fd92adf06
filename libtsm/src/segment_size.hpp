// SPDX-License-Identifier: BSD-3-Clause
// The checks a TSM segment's size passes before anything is built for it: per-block state
// for a size that can never be served would take memory (GBs in seconds) only to be refused.
#pragma once
#include <cstddef>
#include <string>

#include <squall/tsm.hpp>

namespace squall::tsm::detail {

// check_block_size: in squall/tsm.hpp, for the layers above (xsm's allocations divide by it).

// Blocks of a checked `block_size` holding `bytes` (at least one), without wrapping.
std::size_t blocks_for(std::size_t bytes, std::size_t block_size);

// The most state one TSM object may keep on each node: a quarter of this host's memory.
std::size_t state_budget_bytes();

// usage_error, starting with `what` (the API and the setting that chose the size, if any),
// when `bytes` in blocks of `block_size` exceed the segment range (`in_segment_range`: a new
// range is taken there, not memory the program has) or need more protocol state per node
// than a quarter of this host's memory.
void check_segment_size(std::size_t bytes, std::size_t block_size, bool in_segment_range, const std::string& what);

}  // namespace squall::tsm::detail
