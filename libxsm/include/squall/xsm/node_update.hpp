// SPDX-License-Identifier: BSD-3-Clause
// node-update (the paper's section 5.1.3): an update protocol that knows, per element, which
// nodes read it, and at every phase end pushes only those elements to them, one message per
// pair of nodes. The sharing comes from the partition: each node declares the elements of
// other nodes it reads (a CHAOS gather schedule holds the same information), once, and the
// protocol turns that into a squall::comm_pattern (pattern_from_requests) and a virtual
// channel per pair (squall/channel.hpp).
//
//   squall::xsm::node_update upd(sizeof(double));
//   double* x = squall::xsm::alloc<double>(n, upd, {.homes = memory::home_policy::partition()});
//   ... each node writes the initial values of its own elements ...
//   upd.declare_reads(ghosts);  // collective: elements of x this node reads from other nodes
//   for (int it = 0; it < iterations; ++it) {
//     for (i in my part) x_new[i] = f(x[neighbours of i]);  // no misses
//     squall::tsm::barrier();
//     for (i in my part) x[i] = x_new[i];
//     squall::tsm::barrier();  // the declared elements of written blocks reach their readers
//   }
//
// Ownership: elements are written by the home of their block only (choose the homes to match
// the partition); a store by another node ends the job with a message naming the block.
// Consistency: what a node reads after a barrier is what the homes wrote before it, for every
// element it declared; within a phase, other nodes' elements read as they were at the last
// barrier. A node's copy of a block holding elements it declared keeps only those current:
// reading that block's other elements is not detected and gives old values. A read of a block
// holding none of its declared elements misses, fetches the block from its home and keeps it
// until the next barrier (when it is dropped again): correct, but one miss per block per phase.
//
// At a barrier, a home sends a consumer all the elements the consumer declared from it if any
// block holding one of them was written in the phase, and nothing (an end of round) if none
// was (push_policy::when_written, the default). For data that every phase rewrites, say so
// (push_policy::every_phase): the home then sends them at every barrier, written or not, and keeps
// its blocks writable, so its stores are neither tracked nor faulted. libxsm/PROTOCOLS.md has
// the states and messages.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <squall/channel.hpp>
#include <squall/pattern.hpp>
#include <squall/xsm/protocol.hpp>

namespace squall::xsm {

namespace detail {
class home_writes;
}

class node_update final : public protocol {
 public:
  // When a home sends a consumer the elements it declared: at the barriers of phases in which
  // the home wrote a block holding one of them, or at every barrier.
  enum class push_policy { when_written, every_phase };

  // Elements of `element_size` bytes; usage_error for 0.
  explicit node_update(std::size_t element_size, push_policy when = push_policy::when_written);
  ~node_update() override;

  std::string_view name() const override { return "node-update"; }
  // A block must hold whole elements.
  std::string refuse_block_size(std::size_t block_size) const override;
  void attach(block_index first, block_index end, std::size_t block_size) override;
  void started(segment s) override;
  void detach() override;
  void read_fault(segment s, block_index b) override;
  void write_fault(segment s, block_index b) override;
  // when_written: the home learns its writes at phase ends; a store to a copy is found there too.
  bool records_writes() const override { return when_ == push_policy::when_written; }
  void before_barrier() override;

  // Collective, once, after the memory is allocated: the elements (indices from the start of
  // the range this protocol runs, in elements) this node reads; those homed here are left out,
  // repeats count once. Builds the pattern and the channels, then ends a phase: every
  // declared element is sent to its reader, whose blocks holding them become ReadOnly copies.
  // The homes' values written before the call are what the readers see after it. usage_error
  // for an index outside the range, or a second call.
  void declare_reads(std::span<const std::int64_t> elements);
  // Collective: ends this data's phase without a barrier, as a barrier would (the homes'
  // pushes sent, this node's received and unpacked), for a loop whose only synchronisation
  // of this data is its update, as a CHAOS gather is. Other protocols hear nothing.
  void end_phase();
  // What declare_reads built: per peer, the element indices this node sends (its own) and
  // receives (others'). Empty before declare_reads.
  const comm_pattern& pattern() const { return pattern_; }

  // Message handlers (squall/xsm/protocol.hpp); not for the program.
  void on_fetch(segment s, block_index b, int from);                   // home
  void on_fetched(segment s, block_index b, int home, block_part bytes);  // reader

  // This node's counts (and a total per name in the statistics table).
  protocol_counter misses{"xsm.node_update.misses"};  // reads of undeclared blocks that fetched
  protocol_counter pushes{"xsm.node_update.pushes"};  // elements sent as home
  protocol_counter push_messages{"xsm.node_update.push_messages"};  // channel messages with elements
  protocol_counter push_bytes{"xsm.node_update.push_bytes"};
  protocol_counter phases{"xsm.node_update.phases"};  // barriers seen, and declare_reads

 private:
  enum class copy : std::uint8_t { none, kept, fetched };  // this node's copy of another node's block
  // Consecutive elements of one block, copied with one memcpy.
  struct run {
    block_index block;
    std::size_t offset, bytes;  // in the block
  };
  std::vector<run> runs_of(std::span<const std::int64_t> elements) const;  // in message order
  void end_phase(bool everything);
  block_index block_of_element(std::int64_t e) const;

  std::size_t element_size_;
  push_policy when_;
  segment segment_;
  block_index first_ = 0, end_ = 0;
  std::size_t block_size_ = 0;
  bool attached_ = false;
  std::unique_ptr<detail::home_writes> writes_;  // the blocks homed here written this phase (when_written)
  std::vector<copy> copies_;           // per block of the range
  std::vector<block_index> fetched_;   // blocks fetched this phase (capacity: the range)
  bool fetched_answer_ = false;
  comm_pattern pattern_;
  std::vector<std::vector<std::byte>> stage_;          // per node: this phase's message
  std::vector<std::vector<run>> send_runs_, recv_runs_;  // per node: the pattern's elements as runs
  std::unique_ptr<channel_set> channel_;
};

}  // namespace squall::xsm
