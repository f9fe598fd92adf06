// SPDX-License-Identifier: BSD-3-Clause
// What the update protocols (block-update, node-update) share on the home side: a block is
// written by its home only, and the home notes which of its blocks it wrote in the current
// phase. Between phases its blocks are ReadOnly, so the first store to one in a phase faults
// and is noted here; the phase end lowers them to ReadOnly again.
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
  void attach(block_index first, block_index end);

  // Fault handlers, on blocks homed on this node.
  static void read(segment s, block_index b) { s.set_tag(b, tag::read_only); }
  void write(segment s, block_index b);

  // Phase end: the blocks written since the last one, ascending, each lowered to ReadOnly
  // (their bytes in the protocol view are final for the phase). written() answers for them
  // until reopen().
  std::span<const block_index> close(segment s);
  bool written(block_index b) const { return flags_[b - first_] != 0; }
  // The next phase begins: nothing written yet.
  void reopen();

 private:
  block_index first_ = 0;
  std::vector<std::uint8_t> flags_;
  std::vector<block_index> list_;  // capacity: every block of the range
};

// A store to block b by a node other than its home, found in a write fault handler (no
// exception can leave one): the message on standard error, then abort, so squallrun reports
// the node as lost. No allocation.
[[noreturn]] void foreign_write(const char* protocol, segment s, block_index b);

}  // namespace squall::xsm::detail
