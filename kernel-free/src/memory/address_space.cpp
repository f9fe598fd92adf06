// SPDX-License-Identifier: BSD-3-Clause
#include "memory/address_space.hpp"

#include <sys/mman.h>
#include <sys/resource.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/log.hpp"

namespace squall::memory::detail {
namespace {

constexpr int reservation_flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

// The first line of /proc/self/maps that overlaps [start, end), for the error message; empty
// when none does (or the maps cannot be read).
std::string occupant(std::uintptr_t start, std::uintptr_t end) {
  std::FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return {};
  char line[512];
  std::string found;
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    std::uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) == 2 && lo < end && hi > start) {
      found = line;
      if (!found.empty() && found.back() == '\n') found.pop_back();
      break;
    }
  }
  std::fclose(maps);
  return found;
}

// The process's address-space limit (`ulimit -v`, RLIMIT_AS) in bytes, or 0 when it has none.
// A cluster's batch system often sets one; the reservation counts toward it in full.
std::uint64_t address_space_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
  return limit.rlim_cur;
}

}  // namespace

void address_space::reserve(std::uintptr_t base, std::size_t bytes) {
  void* p = ::mmap(reinterpret_cast<void*>(base), bytes, PROT_NONE,
                   reservation_flags | MAP_FIXED_NOREPLACE, -1, 0);
  if (p == MAP_FAILED || reinterpret_cast<std::uintptr_t>(p) != base) {
    const int err = errno;
    if (p != MAP_FAILED) ::munmap(p, bytes);  // a kernel that took the address as a hint
    const std::string taken_by = occupant(base, base + bytes);
    const std::uint64_t limit = address_space_limit();
    if (p == MAP_FAILED && err == ENOMEM && limit != 0 && taken_by.empty()) {
      fatal("cannot reserve the shared segment range of %zu GiB: this process's address-space limit "
            "(ulimit -v, RLIMIT_AS) is %" PRIu64 " MiB. Raise it ('ulimit -v unlimited', or the batch "
            "system's virtual-memory limit), or make the range smaller with SQUALL_SEGMENT_SPACE_GIB: "
            "below the limit, with room for the program and for each segment's mappings, which count "
            "toward it too",
            bytes >> 30, limit >> 20);
    }
    fatal("cannot reserve the shared segment range 0x%" PRIxPTR "-0x%" PRIxPTR " (%s): it is taken "
          "in this process by [%s]; choose a free range with SQUALL_SEGMENT_BASE and "
          "SQUALL_SEGMENT_SPACE_GIB",
          base, base + bytes, p == MAP_FAILED ? std::strerror(err) : "mapped elsewhere",
          taken_by.empty() ? "unknown" : taken_by.c_str());
  }
  base_ = base;
  end_ = base + bytes;
  free_ = {{base, bytes}};
}

std::byte* address_space::take(std::size_t bytes, std::size_t alignment) {
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const auto [start, length] = *it;
    const std::uintptr_t aligned = (start + alignment - 1) & ~(alignment - 1);
    if (aligned - start + bytes > length) continue;
    free_.erase(it);
    if (aligned > start) free_[start] = aligned - start;
    if (aligned + bytes < start + length) free_[aligned + bytes] = start + length - aligned - bytes;
    return reinterpret_cast<std::byte*>(aligned);
  }
  return nullptr;
}

std::string mapping_failure(int err) {
  std::string why = std::strerror(err);
  const std::uint64_t limit = address_space_limit();
  if (err == ENOMEM && limit != 0) {
    why += " (this process's address-space limit, ulimit -v or RLIMIT_AS, is " + std::to_string(limit >> 20) +
           " MiB: raise it, or make the segments and SQUALL_SEGMENT_SPACE_GIB smaller)";
  }
  return why;
}

void address_space::give_back(std::byte* start, std::size_t bytes) {
  if (::mmap(start, bytes, PROT_NONE, reservation_flags | MAP_FIXED, -1, 0) == MAP_FAILED) {
    fatal("cannot return segment memory at %p to the reservation: %s", static_cast<void*>(start),
          std::strerror(errno));
  }
  auto a = reinterpret_cast<std::uintptr_t>(start);
  std::size_t length = bytes;
  auto next = free_.lower_bound(a);
  if (next != free_.end() && next->first == a + length) {
    length += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == a) {
      prev->second += length;
      return;
    }
  }
  free_[a] = length;
}

}  // namespace squall::memory::detail
