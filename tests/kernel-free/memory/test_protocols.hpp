// Protocols and helpers the memory tests share.
#pragma once
#include <cstdint>
#include <string>

#include <squall/memory.hpp>
#include <squall/stats.hpp>

namespace squall::memory::testing {

// Resolves every fault by raising the tag just enough, and counts the calls.
struct raise_only : protocol {
  int reads = 0, writes = 0;
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

inline void touch_read(const void* p) { (void)*static_cast<const volatile std::uint8_t*>(p); }
inline void touch_write(void* p, std::uint8_t v = 1) { *static_cast<volatile std::uint8_t*>(p) = v; }

}  // namespace squall::memory::testing
