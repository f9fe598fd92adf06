// SPDX-License-Identifier: BSD-3-Clause
// The stache protocol for TSM blocks, written on the protocol kit (squall/tsm/protocol.hpp):
// the home side (a home_directory entry per block and the requests waiting for busy blocks)
// and the cache side (fault handlers that ask the home and wait), in stache.cpp; the
// one-sided reads of blocks clean at a home of this host, in stache_one_sided.cpp. The states
// and messages are described in libtsm/PROTOCOL.md.
//
// Everything a message handler or fault handler touches is allocated in attach: handlers
// may run inside a fault handler on the SIGBUS path, where nothing may allocate.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include <squall/tsm.hpp>
#include <squall/tsm/directory.hpp>
#include <squall/tsm/messages.hpp>
#include <squall/tsm/protocol.hpp>

namespace squall::tsm::detail {

class stache final : public tsm::protocol {
 public:
  stache();
  // The bytes a node keeps per block of a segment (its directory entry here, the memory
  // layer's tag), for checking a size before anything is built.
  static std::size_t state_bytes_per_block();
  // Alone in its job, a node takes fresh memory in aligned chunks of this many bytes at its
  // first fault there (0: with other nodes, or SQUALL_TSM_FAULT_AROUND=0 or 1).
  static std::size_t alone_chunk_bytes();
  // Whether stache's segments should have home words (memory::segment_options::home_words):
  // read misses then copy blocks clean at a home of this host without its processor
  // (SQUALL_TSM_ONE_SIDED, on by default; jobs of up to 63 nodes).
  static bool wants_home_words();

  std::string_view name() const override { return "stache"; }
  // Before attach, for a segment that adopts pages the process has (tsm::share): each node's
  // copy starts with its own bytes there, not the home's, so every grant carries the bytes.
  void adopting() { adopted_ = true; }
  void attach(block_index first, block_index end, std::size_t block_size) override;
  void read_fault(segment s, block_index b) override { acquire(s, b, false); }
  void write_fault(segment s, block_index b) override { acquire(s, b, true); }
  void started(segment s) override { segment_ = s; }
  // Reopens the blocks this home wrote after readers of its host had copies (PROTOCOL.md).
  void before_barrier() override;

  // Message handlers (squall/tsm/messages.hpp).
  void on_request(segment s, block_index b, int from, bool write);              // home
  void on_invalidate(segment s, block_index b, int home, bool keep_read_only);  // holder
  void on_ack(segment s, block_index b, int from, block_part bytes);            // home
  void on_grant(segment s, block_index b, int home, block_part bytes, bool write, bool exclusive);  // requester

  counts local_counts() const;

  // tsm::fetch, under the node lock: asks the home for a read copy of b unless this node can
  // read it already (true if it asked). The grant counts down fetches_in_flight() instead of
  // answering a fault, and starts no hold.
  bool fetch_ahead(segment s, block_index b);
  static std::size_t fetches_in_flight();
  // The most requests tsm::fetch keeps in flight. With a fault's one, the most of one node's
  // requests that can wait at a home at once: the homes' queues are sized for it up front.
  static constexpr std::size_t fetch_window = 16;

  // The hold (PROTOCOL.md): an invalidation of the block this node was granted last waits
  // until the access that faulted has had time to run. Ends at this node's next fault, or
  // after SQUALL_TSM_HOLD_US. Program side (fault handlers) and handlers alike.
  static void release_hold();
  // The same from program code outside handlers (takes the node lock). Synchronisation
  // calls (locks, barriers) let go first: the program is done with the block it was
  // granted, and another node may need it to get this far.
  static void let_go();

 private:
  void start(segment s, block_index b, int from, bool write);  // a request on an idle block
  // The one-sided directory (PROTOCOL.md, "One-sided reads"): the home closes a block's home
  // word while a transaction runs or a node holds the block writable, taking in the readers
  // that registered there; it opens it when the block is clean again.
  void close(segment s, block_index b, bool write);
  void open_if_clean(segment s, block_index b);
  bool read_one_sided(segment s, block_index b);  // a reader's copy without the home's processor
  void note_written_after_readers(segment s, block_index b);  // the home's own write grant
  static void reopen_locked(void* self);
  void invalidate(segment s, block_index b, int holder, bool keep_read_only);
  bool lower(segment s, block_index b, bool keep_read_only);  // this node's copy; true if it was ReadWrite
  void grant(segment s, block_index b);  // the transaction is complete
  void granted(segment s, block_index b);  // this node's request was answered
  void acquire(segment s, block_index b, bool write);
  void ask_home(segment s, block_index b, bool write);  // a request, sent or (at the home) served
  void claim_ahead(segment s, block_index b);  // fault-around at the home (stache.cpp)
  void claim_chunk(segment s, block_index b);  // the same, alone in the job
  void answer_invalidation(segment s, block_index b, int home, bool keep_read_only);
  bool holding(segment s, block_index b) const;  // b is the block held, with no invalidation yet
  void hold_invalidation(int home, bool keep_read_only);  // answered when the hold ends

  home_directory dir_;  // for the blocks homed here
  bool answered_ = false;  // this node's request in flight was granted
  bool one_sided_ = false;  // SQUALL_TSM_ONE_SIDED, and few enough nodes for a word's bits
  segment segment_;  // the segment this stache runs blocks of (started)
  block_index first_ = 0;
  std::size_t chunk_blocks_ = 1;  // alone_chunk_bytes() in blocks (1: not alone)
  std::vector<char> fetching_;  // per block from first_: a tsm::fetch request is in flight
  std::vector<char> exclusive_;  // this node's ReadOnly copy was granted exclusively (E)
  std::vector<char> granting_exclusive_;  // home: the transaction in progress grants a read exclusively
  // Home: the block may hold bytes other than zeros (it was granted writable, or exclusively,
  // to some node, the home included, or the segment adopted memory). Until then every node's
  // copy is zeros, so a grant carries no bytes (PROTOCOL.md, "Blocks nobody wrote").
  std::vector<char> written_;
  bool adopted_ = false;
  // Home: blocks it took ReadWrite from readers of its host, to be lowered to ReadOnly and
  // opened at its next barrier (capacity reserved at attach), and per block where it stands.
  enum reopen_mark : char {
    not_listed,
    listed,
    reopened,      // open since the home's barrier: did anyone copy it before it closed?
    not_worth_it,  // a reopening that nobody copied from: never listed again
  };
  static constexpr std::size_t reopen_capacity = 4096;  // more written blocks stay ReadWrite
  std::vector<block_index> to_reopen_;
  std::vector<reopen_mark> reopen_marks_;
  std::atomic<bool> reopens_waiting_{false};  // to_reopen_ is not empty (read without the lock)
  struct sweep {
    block_index end = 0;  // where the home's last fault-around window of this sweep ended
    std::size_t size = 0;  // and how many blocks it was (0: none yet)
  };
  std::array<sweep, 4> sweeps_{};
  std::size_t next_sweep_ = 0;  // the one a new sweep replaces

  protocol_counter read_misses_{"tsm.read_misses"};
  protocol_counter write_misses_{"tsm.write_misses"};
  protocol_counter upgrades_{"tsm.upgrades"};
  protocol_counter retries_{"tsm.retries"};
  protocol_counter invalidations_received_{"tsm.invalidations_received"};
  protocol_counter writebacks_{"tsm.writebacks"};
  protocol_counter invalidations_sent_{"tsm.invalidations_sent"};
  protocol_counter requests_served_{"tsm.requests_served"};
  protocol_counter requests_deferred_{"tsm.requests_deferred"};
  protocol_counter fetched_{"tsm.fetched"};
  protocol_counter claimed_{"tsm.claimed_ahead"};
  protocol_counter exclusive_grants_{"tsm.exclusive_grants"};  // as home
  protocol_counter silent_upgrades_{"tsm.silent_upgrades"};
  protocol_counter one_sided_reads_{"tsm.one_sided_reads"};
  protocol_counter reopened_{"tsm.reopened"};
  protocol_counter zero_grants_{"tsm.zero_grants"};
};

}  // namespace squall::tsm::detail
