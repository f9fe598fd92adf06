// SPDX-License-Identifier: BSD-3-Clause
#include "memory/segment_table.hpp"

namespace squall::memory::detail {
namespace {

// Never destroyed: a fault-handling thread may still look at it during exit. Each slot
// knows its number from the start (the fault path reads it without a lock).
segment_state* const slots = [] {
  auto* all = new segment_state[max_segments];
  for (std::uint32_t i = 0; i < max_segments; ++i) all[i].index = i;
  return all;
}();
std::atomic<std::uint32_t> slots_in_use{1};  // slots below this may be live

}  // namespace

segment_state& slot(std::uint32_t i) { return slots[i]; }

std::uint32_t unused_slot() {
  for (std::uint32_t i = 1; i < max_segments; ++i) {
    if (!slots[i].live.load(std::memory_order_relaxed)) return i;
  }
  return 0;
}

void publish(std::uint32_t i) {
  slots[i].live.store(true, std::memory_order_release);
  if (slots_in_use.load(std::memory_order_relaxed) <= i) {
    slots_in_use.store(i + 1, std::memory_order_release);
  }
}

segment_state* find_segment(const void* p) {
  const std::uint32_t n = slots_in_use.load(std::memory_order_acquire);
  for (std::uint32_t i = 1; i < n; ++i) {
    segment_state& s = slots[i];
    if (s.live.load(std::memory_order_acquire) && s.holds(p)) return &s;
  }
  return nullptr;
}

}  // namespace squall::memory::detail
