// SPDX-License-Identifier: BSD-3-Clause
// A release-consistent multiple-writer protocol for data that several nodes write in
// disjoint parts of one block (sub-page sharing, as radix's permutation writes), home-based
// like TreadMarks' HLRC and ArgoDSM (libxsm/PROTOCOLS.md: states, messages, the consistency
// model).
//
//   squall::xsm::multiple_writer mw;
//   auto* keys = squall::xsm::alloc<std::uint64_t>(n, mw);
//   for (i in my slice) keys[i] = ...;   // many nodes write one page at once, no messages
//   squall::tsm::barrier();                // diffs go home; stale copies are dropped
//
// A block's home keeps the master copy and writes it in place. Elsewhere a read fault fetches
// a read-only copy from the home; a write fault copies the block into a twin and makes it
// writable, with no message. At a release (before_release, before_barrier) the node sends
// the differences between its writable copies and their twins to the homes, which apply them
// to the master copy, and waits until every home has; at an acquire (after_acquire,
// after_barrier) it drops every copy it holds (flushing its own writes first), so the next
// access fetches the merged block.
//
// By name, without an object: tsm::options::protocol = "multiple-writer" runs a whole segment
// or both heaps of tsm::init under it, and SQUALL_TSM_PROTOCOL=multiple-writer every segment
// of a PARMACS program (libxsm/PROTOCOLS.md).
//
// Consistency: release consistency. Programs free of data races see sequential consistency;
// a write becomes visible to another node at the writer's next release or barrier followed
// by the reader's next acquire or barrier. Two nodes writing the same byte in one interval
// leave one of their values, unspecified which. Diffs are exact to the byte.
//
// Threads: a node keeps one set of copies and twins for all its threads, and a barrier, lock
// acquire or release drops or flushes them for the whole node. Several threads of a node may
// touch the memory, but none while another thread of the node is at a synchronisation point
// (stop them first, as a phase loop does); a write found meanwhile ends the node with a
// message, since its bytes, or another node's, would otherwise be lost. PARMACS runs one
// worker per node under this protocol.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <squall/am.hpp>
#include <squall/xsm/protocol.hpp>

namespace squall::xsm {

class multiple_writer final : public protocol {
 public:
  multiple_writer();
  ~multiple_writer() override;

  std::string_view name() const override { return "multiple-writer"; }
  void attach(block_index first, block_index end, std::size_t block_size) override;
  void started(segment s) override;
  void detach() override;
  void read_fault(segment s, block_index b) override;
  void write_fault(segment s, block_index b) override;
  void before_barrier() override { flush(); }
  void after_barrier() override { drop_copies(); }
  void after_acquire() override;
  void before_release() override { flush(); }

  // Message handlers (squall/xsm/protocol.hpp).
  void on_fetch(segment s, block_index b, int from, bool write);                    // home
  void on_copy(segment s, block_index b, int home, block_part bytes, bool write);   // fetcher
  void on_diffs(segment s, block_index b, int from, am::payload records);           // home
  void on_diffs_applied(segment s, block_index b, int home);                        // writer

  // Exact counts of this object on this node (totals per name in the statistics table).
  protocol_counter fetches{"xsm.multiple_writer.fetches"};            // copies asked of a home
  protocol_counter fetches_direct{"xsm.multiple_writer.fetches_direct"};  // of them, read from its memory here
  protocol_counter fetches_served{"xsm.multiple_writer.fetches_served"};  // by this node as home
  protocol_counter twins{"xsm.multiple_writer.twins"};                // blocks made writable here
  protocol_counter diffs_sent{"xsm.multiple_writer.diffs_sent"};      // blocks diffed and sent home
  protocol_counter diff_messages{"xsm.multiple_writer.diff_messages"};  // messages carrying them
  protocol_counter diff_bytes{"xsm.multiple_writer.diff_bytes"};      // changed bytes sent
  protocol_counter diffs_applied{"xsm.multiple_writer.diffs_applied"};  // block diffs applied as home
  protocol_counter invalidations{"xsm.multiple_writer.invalidations"};  // copies dropped at acquires

 private:
  struct outbox;  // the diff message being filled for one home
  bool is_home(block_index b) const { return seg_.home(b) == me_; }
  std::byte* twin_of(block_index b) const { return twins_.get() + (b - first_) * block_size_; }
  void fetch(segment s, block_index b, bool write);  // a copy from the home, writable and twinned if `write`
  void copied(segment s, block_index b, bool write);  // the home's bytes are here: readable, or writable and twinned
  void flush();  // sends every writable copy's diff home and waits until all are applied
  void drop_copies();
  [[noreturn]] void written_while_synchronising(block_index b) const;  // a message, then abort
  void add_diff(block_index b);  // appends b's changed runs to its home's outbox
  void put(outbox& o, block_index b, std::size_t offset, const std::byte* bytes, std::size_t length);
  void send_outbox(outbox& o, int home);

  segment seg_;
  block_index first_ = 0, end_ = 0;
  std::size_t block_size_ = 0;
  int me_ = 0;
  std::unique_ptr<std::byte[]> twins_;  // one per block, committed by the kernel when first written
  std::vector<block_index> dirty_;       // writable copies (not homed here), reserved in attach
  std::vector<block_index> cached_;      // copies held (not homed here), reserved in attach
  std::vector<outbox> outboxes_;         // one per home
  std::uint64_t diff_messages_out_ = 0;  // this flush's, and the answers to them so far
  std::uint64_t diff_messages_applied_ = 0;
  bool copy_arrived_ = false;
};

}  // namespace squall::xsm
