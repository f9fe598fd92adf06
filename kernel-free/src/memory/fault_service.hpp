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
// send or wait (and on the thread path would wait for the lock forever). Library code never
// touches an application view while holding the lock, so only a message handler or a
// wait_until predicate that touched one can cause this.
void serve_fault(segment_state& s, block_index b, bool write, int faulter = 0);

struct block_range {
  std::byte* start = nullptr;
  std::size_t bytes = 0;
};

// The thread path's entry: serves a fault the userfaultfd reported at `address` and returns
// the block's range in the application view, for waking its waiters. Returns an empty range,
// doing nothing, when no live segment holds the address: a late report (several threads
// faulted on one block and the first report woke them all) for a segment freed since. The
// segment is looked up under the fault lock, so it cannot be freed meanwhile.
block_range serve_reported_fault(const void* address, bool write, int faulter);

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
