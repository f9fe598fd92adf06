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

}  // namespace squall::memory::detail
