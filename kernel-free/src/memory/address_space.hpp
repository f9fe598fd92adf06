// SPDX-License-Identifier: BSD-3-Clause
// The range of virtual addresses where segments live, the same in every node: reserved
// once (MAP_FIXED_NOREPLACE, inaccessible until a segment is mapped there) and handed out
// first-fit, so nodes that allocate and free in the same order get the same addresses.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace squall::memory::detail {

class address_space {
 public:
  // Ends the process with a message naming what is there if the range is taken.
  void reserve(std::uintptr_t base, std::size_t bytes);
  // `bytes` at an address aligned to `alignment` (a power of two); nullptr if no room.
  std::byte* take(std::size_t bytes, std::size_t alignment);
  // Returns the range to the reservation (whatever was mapped there is unmapped).
  void give_back(std::byte* start, std::size_t bytes);

  bool contains(const void* p) const {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    return a >= base_ && a < end_;
  }
  std::uintptr_t base() const { return base_; }
  std::size_t bytes() const { return end_ - base_; }

 private:
  std::uintptr_t base_ = 0, end_ = 0;
  std::map<std::uintptr_t, std::size_t> free_;  // start -> length, never adjacent
};

// Why an mmap of segment memory failed, for a message: strerror(err) and, for ENOMEM under an
// address-space limit (`ulimit -v`, RLIMIT_AS, which the segment range and every view of a
// segment count toward), the limit and what to do about it.
std::string mapping_failure(int err);

}  // namespace squall::memory::detail
