// SPDX-License-Identifier: BSD-3-Clause
// What the update protocols (block-update, node-update) share on the home side: a block is
// written by its home only, and the home learns at each phase end which of its blocks were
// written in the phase. Between phases its blocks are ReadOnly. The kernel records a store
// to one (memory::segment::take_written; the protocols say records_writes()), or, where it
// cannot, the store faults and write() raises the block to ReadWrite; either way close()
// lists the blocks and lowers them to ReadOnly again.
//
// Everything is allocated in attach: the fault handlers that note a write may run on the
// SIGBUS path. Fault handlers and phase ends both run on the program thread.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include <squall/xsm/protocol.hpp>

namespace squall::xsm::detail {

class home_writes {
 public:
  // `protocol` names the protocol in the message for a store by another node.
  void attach(const char* protocol, block_index first, block_index end);

  // Fault handlers, on blocks homed on this node.
  static void read(segment s, block_index b) { s.set_tag(b, tag::read_only); }
  static void write(segment s, block_index b) { s.set_tag(b, tag::read_write); }

  // Phase end: the blocks written since the last one, ascending, each lowered to ReadOnly
  // (their bytes in the protocol view are final for the phase). written() answers for them
  // until reopen(). A listed block homed elsewhere was stored to by this node against the
  // rule (a recorded store to a copy): foreign_write.
  std::span<const block_index> close(segment s);
  bool written(block_index b) const { return flags_[b - first_] != 0; }
  // The next phase begins: nothing written yet.
  void reopen();

 private:
  const char* protocol_ = "";
  block_index first_ = 0, end_ = 0;
  std::vector<std::uint8_t> flags_;
  std::vector<block_index> list_;  // room for every block of the range
  std::size_t listed_ = 0;
};

// A store to block b by a node other than its home, found in a write fault handler (no
// exception can leave one) or at a phase end: the message on standard error, then abort, so
// squallrun reports the node as lost. No allocation.
[[noreturn]] void foreign_write(const char* protocol, segment s, block_index b);

}  // namespace squall::xsm::detail
