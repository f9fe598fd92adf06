// SPDX-License-Identifier: BSD-3-Clause
// Counters every layer keeps, per node. Exact and machine-independent, so tests can
// compare them. SQUALL_STATS=1 prints them at finalize, gathered into one table across nodes
// (README: SQUALL_STATS).
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace squall::stats {

struct handler_counts {
  std::string name;
  bool internal = false;  // the runtime's or a library's own handler, not the program's
  std::uint64_t sent = 0, sent_bytes = 0, received = 0, received_bytes = 0;
};

struct snapshot {
  std::map<std::string, std::uint64_t, std::less<>> counters;  // e.g. "am.packets_sent"
  std::vector<handler_counts> handlers;                         // active messages per handler

  std::uint64_t get(std::string_view name) const;   // 0 if never counted
  handler_counts handler(std::string_view name) const;  // zeros if never used
};

snapshot take();  // this node's counters now
void reset();     // zeroes this node's counters (not collective)

// A named counter a layer increments; register once (e.g. as a static) and bump it. The
// bumps are inline: a call into the library for each was 6% of an element round trip
// (libarrays bumps four counters a message).
class counter {
 public:
  explicit counter(std::string_view name);
  void add(std::uint64_t n = 1) { value_->fetch_add(n, std::memory_order_relaxed); }
  // For a counter only one thread ever adds to (a library's scheduler thread): a plain load
  // and store, no locked instruction (which costs more than the rest of a short message path).
  void add_from_one_thread(std::uint64_t n = 1) {
    value_->store(value_->load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

 private:
  std::atomic<std::uint64_t>* value_;  // this node's slot for the name (never freed)
};

}  // namespace squall::stats
