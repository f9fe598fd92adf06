// SPDX-License-Identifier: BSD-3-Clause
// Fault vectoring, shared by both fault paths and by system calls on shared memory: runs
// the bound protocol's handler for an access the block's tag forbids.
#pragma once
#include "memory/segment_table.hpp"

namespace squall::memory::detail {

// Returns when the block's tag allows the access. If the tag forbids it, the protocol's
// read_fault or write_fault runs (under the node lock, so atomically with message
// handlers) and must raise the tag; one that does not ends the process with a message.
// If the tag already allows it, the PTEs were missing (first touch, or reclaimed by the
// kernel) and are mapped again. Safe in a signal handler.
//
// `faulter` is the kernel id of the thread whose access faulted (0: the calling thread). If
// that thread holds the node lock, the process ends with a message: the handler could not
// send or wait (and on the thread path would wait for the lock forever). On the thread path
// (faulter != 0) the report may be a late one whose thread has run on into the lock, so the
// first such report of a thread and block is not served and the message waits for the
// thread's next fault on the block. Library code never
// touches an application view while holding the lock, so only a message handler or a
// wait_until predicate that touched one can cause this.
void serve_fault(segment_state& s, block_index b, bool write, int faulter = 0);

struct wake_range {
  std::byte* start = nullptr;
  std::size_t bytes = 0;
};

// Before a fault on an Invalid block is served, and without the fault lock, the pages of the
// run around it are put in the page cache (segment_options::fill_around_faults): the
// allocation then runs in each faulting thread, or in several fault threads, side by side,
// not one at a time under the lock. serve_fault does it first; the thread path calls this
// for a report it read when retirements_begun() gave `retirements_before_read`, and does
// nothing when a segment began retiring since (the address may be another segment's by now).
void fill_reported(const void* address, std::uint64_t retirements_before_read);

// The thread path's entry: serves a fault the userfaultfd reported at `address` and returns
// the range to wake its waiters in (the block's, in the application view), which the caller
// wakes only after map_deferred (deferred_maps.hpp), called once it has let go of the fault
// lock. The report was
// read when retirements_begun() gave `retirements_before_read`:
// - if a segment has begun retiring since, the report may be a late one for that segment's
//   range, which a new segment may hold by now: nothing is served and only the page is
//   woken (a thread that still waits faults again, and that report is served);
// - otherwise, when no live segment holds the address or its free has begun
//   (retire_from_faults), the report is a late one that no thread of a correct program
//   waits on: nothing is served or woken.
// The segment is looked up under the fault lock, so it cannot be freed meanwhile.
wake_range serve_reported_fault(const void* address, bool write, int faulter,
                                 std::uint64_t retirements_before_read);

// The first step of memory::free on this node, before it tells the other nodes: waits for
// a fault being served here to end, then lets no reported fault on `s` be served. Without
// it a late report served during the free's collective sends protocol messages about the
// segment that arrive after another node has unmapped it.
void retire_from_faults(segment_state& s);
// How many segments have begun retiring (the thread path compares it across a read).
std::uint64_t retirements_begun();

// Holds off every fault on this node (both paths) while a segment is retired, so that no
// fault is served into a range being unmapped.
class faults_held_off {
 public:
  faults_held_off();
  ~faults_held_off();
  faults_held_off(const faults_held_off&) = delete;
  faults_held_off& operator=(const faults_held_off&) = delete;
};

}  // namespace squall::memory::detail
