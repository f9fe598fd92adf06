// SPDX-License-Identifier: BSD-3-Clause
#include "memory/deferred_maps.hpp"

#include <sched.h>

#include <atomic>

#include "memory/page_tables.hpp"

namespace squall::memory::detail {
namespace {

// A kept run is in one table shared by the process's threads, so that whoever needs it mapped
// first maps it: its own thread after the handler, or a thread about to lower one of its tags
// (which may hold the node lock that the keeping thread, still in its handler, waits for).
// Whoever maps it needs no lock, so waiting for a mapping in progress cannot deadlock.
enum run_state : int { free_slot, filling, kept_for_later, being_mapped };

struct kept_run {
  std::atomic<int> state{free_slot};
  segment_state* s = nullptr;
  int uffd = -1;
  block_index first = 0;
  std::size_t count = 0;
  bool write_protected = false;
};

constexpr int table_size = 64;
kept_run table[table_size];

// A fault handler claims one run or two (libtsm's fault-around); more are mapped at once.
constexpr int max_kept = 8;
thread_local int kept_here[max_kept];  // indices into table
thread_local int kept_count = 0;
thread_local int open_scopes = 0;

// Maps run i if it is still kept (and not being mapped by another thread already).
void take(int i) {
  kept_run& r = table[i];
  int expected = kept_for_later;
  if (!r.state.compare_exchange_strong(expected, being_mapped, std::memory_order_acq_rel)) return;
  map_blocks(r.uffd, *r.s, r.first, r.count, r.write_protected);
  r.s->maps_in_flight.fetch_sub(1, std::memory_order_release);
  r.state.store(free_slot, std::memory_order_release);
}

}  // namespace

mapping_deferred::mapping_deferred() { ++open_scopes; }
mapping_deferred::~mapping_deferred() { --open_scopes; }

bool defer_mapping(segment_state& s, int uffd, block_index first, std::size_t count, bool write_protected) {
  if (open_scopes == 0 || kept_count == max_kept) return false;
  for (int i = 0; i < table_size; ++i) {
    int expected = free_slot;
    if (!table[i].state.compare_exchange_strong(expected, filling, std::memory_order_acquire)) continue;
    kept_run& r = table[i];
    r.s = &s;
    r.uffd = uffd;
    r.first = first;
    r.count = count;
    r.write_protected = write_protected;
    s.maps_in_flight.fetch_add(1, std::memory_order_seq_cst);
    r.state.store(kept_for_later, std::memory_order_release);
    kept_here[kept_count++] = i;
    return true;
  }
  return false;  // the table is full: mapped now
}

void map_deferred() {
  for (int k = 0; k < kept_count; ++k) take(kept_here[k]);
  kept_count = 0;
}

void wait_for_deferred_maps(segment_state& s) {
  if (s.maps_in_flight.load(std::memory_order_acquire) == 0) return;
  for (int i = 0; i < table_size; ++i) {
    if (table[i].state.load(std::memory_order_acquire) == kept_for_later && table[i].s == &s) take(i);
  }
  // What is left is being mapped by other threads, which need nothing to finish.
  for (unsigned spins = 0; s.maps_in_flight.load(std::memory_order_acquire) != 0; ++spins) {
    if ((spins & 63) == 63) sched_yield();
  }
}

}  // namespace squall::memory::detail
