// SPDX-License-Identifier: BSD-3-Clause
// The stache protocol for one TSM segment: the home side (a directory entry per block and
// the requests waiting for busy blocks) and the cache side (fault handlers that ask the
// home and wait). The states and messages are described in libtsm/PROTOCOL.md.
//
// Everything a message handler or fault handler touches is allocated up front: handlers may
// run inside a fault handler on the SIGBUS path, where nothing may allocate.
#pragma once
#include <cstdint>
#include <vector>

#include <squall/am.hpp>
#include <squall/memory.hpp>
#include <squall/tsm.hpp>

namespace squall::tsm::detail {

using memory::block_index;
using memory::segment;
using memory::tag;

class stache final : public memory::protocol {
 public:
  // For a segment of `blocks` blocks; constructed before the segment is allocated.
  explicit stache(std::size_t blocks);
  // The bytes a node keeps per block of a segment (its directory entry and sharer bits here,
  // the memory layer's tag), for checking a size before anything is built.
  static std::size_t state_bytes_per_block();

  void read_fault(segment s, block_index b) override { acquire(s, b, false); }
  void write_fault(segment s, block_index b) override { acquire(s, b, true); }

  // Message handlers, with the node lock held.
  void on_request(segment s, block_index b, int from, bool write);              // home
  void on_invalidate(segment s, block_index b, int home, bool keep_read_only);  // holder
  // The bytes that came with an ack are already in the protocol view; a grant brings the
  // block's last part (or all of it, or nothing) at `offset`.
  void on_ack(segment s, block_index b);  // home
  void on_grant(segment s, block_index b, bool write, std::size_t offset, am::payload bytes);  // requester

  const counts& local_counts() const { return counts_; }

  // The hold (PROTOCOL.md): an invalidation of the block this node was granted last waits
  // until the access that faulted has had time to run. Ends at this node's next fault, or
  // after SQUALL_TSM_HOLD_US. Program side (fault handlers) and handlers alike.
  static void release_hold();
  // The same from program code outside handlers (takes the node lock). Synchronisation
  // calls (locks, barriers) let go first: the program is done with the block it was
  // granted, and another node may need it to get this far.
  static void let_go();

 private:
  // Home side, per block. Transient state: `requester >= 0` (busy: invalidations or a
  // writeback outstanding for that request).
  struct home_entry {
    std::int32_t owner = -1;      // node holding the block ReadWrite
    std::int32_t requester = -1;  // request in progress
    std::uint32_t acks = 0;       // answers still expected for it
    bool write = false;
  };
  struct waiting_request {
    block_index block;
    std::int32_t node;
    bool write;
  };

  bool is_sharer(block_index b, int node) const;
  void set_sharer(block_index b, int node, bool on);
  void start(segment s, block_index b, int from, bool write);  // a request on an idle block
  void invalidate(segment s, block_index b, int holder, bool keep_read_only);
  bool lower(segment s, block_index b, bool keep_read_only);  // this node's copy; true if it was ReadWrite
  void grant(segment s, block_index b);  // the transaction is complete
  void acquire(segment s, block_index b, bool write);
  void answer_invalidation(segment s, block_index b, int home, bool keep_read_only);

  int nodes_;
  std::size_t words_;                // sharer bitmap words per block
  std::vector<home_entry> dir_;      // used for the blocks homed here
  std::vector<std::uint64_t> sharers_;  // blocks x words_
  // Requests for busy blocks, oldest first. A node has at most one request in flight (its
  // faults are served one at a time), so `nodes_` entries always suffice.
  std::vector<waiting_request> waiting_;
  counts counts_;
  bool answered_ = false;  // this node's request in flight was granted
};

}  // namespace squall::tsm::detail
