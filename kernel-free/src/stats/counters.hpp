// SPDX-License-Identifier: BSD-3-Clause
// Storage of the per-node counters: named counters in fixed slots (so bumping one never
// allocates) and per-handler message counts indexed by the handler's registry slot.
#pragma once
#include <atomic>
#include <cstdint>
#include <string_view>

namespace squall::stats {

constexpr int max_counters = 256;
constexpr int max_handlers = 1024;

// Finds or creates the slot of a named counter.
int counter_slot(std::string_view name);

struct handler_slot {
  std::atomic<std::uint64_t> sent{0}, sent_bytes{0}, received{0}, received_bytes{0};
  // Sends staged without the node lock (am/stage.hpp), counted by their one thread apart.
  std::atomic<std::uint64_t> staged_sent{0}, staged_sent_bytes{0};
};

// Plain static arrays (constant-initialised, never destroyed), so that bumping a counter
// on the message path is one load and one store.
inline std::atomic<std::uint64_t> counter_values[max_counters];
inline handler_slot handler_slots[max_handlers];

inline std::atomic<std::uint64_t>& counter_at(int slot) { return counter_values[slot]; }
inline handler_slot& handler_at(int index) { return handler_slots[index]; }

// Adds n to a counter whose writers are serialised (by the node lock): a relaxed load and
// store, cheaper than an atomic add, and still race-free for concurrent readers.
inline void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) {
  c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}


}  // namespace squall::stats
