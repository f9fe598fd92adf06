// SPDX-License-Identifier: BSD-3-Clause
// Protocols and helpers the memory tests share.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include <squall/memory.hpp>
#include <squall/stats.hpp>

namespace squall::memory::testing {

// The page size the tests lay their segments out in.
inline constexpr std::size_t page = 4096;

// Resolves every fault by raising the tag just enough, and counts the calls.
struct raise_only : protocol {
  std::atomic<int> reads{0}, writes{0};  // the fault thread counts, the program reads
  void read_fault(segment s, block_index b) override {
    ++reads;
    s.set_tag(b, tag::read_only);
  }
  void write_fault(segment s, block_index b) override {
    ++writes;
    s.set_tag(b, tag::read_write);
  }
};

// The memory counters' growth since construction.
class counter_delta {
 public:
  counter_delta() : start_(stats::take()) {}
  std::uint64_t operator()(const std::string& name) const { return stats::take().get(name) - start_.get(name); }

 private:
  stats::snapshot start_;
};

// Atomic (relaxed), as threads of one node may touch a byte together.
inline void touch_read(const void* p) { (void)__atomic_load_n(static_cast<const std::uint8_t*>(p), __ATOMIC_RELAXED); }
inline void touch_write(void* p, std::uint8_t v = 1) { __atomic_store_n(static_cast<std::uint8_t*>(p), v, __ATOMIC_RELAXED); }

}  // namespace squall::memory::testing
