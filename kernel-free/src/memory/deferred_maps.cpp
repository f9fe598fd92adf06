// SPDX-License-Identifier: BSD-3-Clause
#include "memory/deferred_maps.hpp"

#include <sched.h>

#include "memory/page_tables.hpp"

namespace squall::memory::detail {
namespace {

struct kept_run {
  segment_state* s;
  int uffd;
  block_index first;
  std::size_t count;
  bool write_protected;
};

// A fault handler claims one run or two (libtsm's fault-around); more are mapped at once.
constexpr int max_kept = 8;
thread_local kept_run kept[max_kept];
thread_local int kept_count = 0;
thread_local int open_scopes = 0;

void map_kept(int i) {
  const kept_run& r = kept[i];
  map_blocks(r.uffd, *r.s, r.first, r.count, r.write_protected);
  r.s->maps_in_flight.fetch_sub(1, std::memory_order_release);
}

}  // namespace

mapping_deferred::mapping_deferred() { ++open_scopes; }
mapping_deferred::~mapping_deferred() { --open_scopes; }

bool defer_mapping(segment_state& s, int uffd, block_index first, std::size_t count, bool write_protected) {
  if (open_scopes == 0 || kept_count == max_kept) return false;
  s.maps_in_flight.fetch_add(1, std::memory_order_seq_cst);
  kept[kept_count++] = {&s, uffd, first, count, write_protected};
  return true;
}

void map_deferred() {
  for (int i = 0; i < kept_count; ++i) map_kept(i);
  kept_count = 0;
}

void wait_for_deferred_maps(segment_state& s) {
  int left = 0;
  for (int i = 0; i < kept_count; ++i) {
    if (kept[i].s == &s) {
      map_kept(i);
    } else {
      kept[left++] = kept[i];
    }
  }
  kept_count = left;
  for (unsigned spins = 0; s.maps_in_flight.load(std::memory_order_acquire) != 0; ++spins) {
    if ((spins & 63) == 63) sched_yield();
  }
}

}  // namespace squall::memory::detail
