// SPDX-License-Identifier: BSD-3-Clause
// block-update (the paper's section 5.1.3): an update protocol that learns, from the misses of
// the program's first iteration, which nodes read each block, and from then on pushes every block
// its home wrote in a phase to those nodes at the phase end, so they do not miss on it again.
// No inspector, no change to the loop: the program runs its loop with barriers.
//
//   squall::xsm::block_update upd(3);  // the setup's barrier and the first iteration's two
//   double* x = squall::xsm::alloc<double>(n, upd, {.homes = memory::home_policy::partition()});
//   for (i in my part) x[i] = initial(i);
//   squall::tsm::barrier();
//   for (int it = 0; it < iterations; ++it) {
//     for (i in my part) x_new[i] = f(x[neighbours of i]);  // reads others' blocks of x
//     squall::tsm::barrier();
//     for (i in my part) x[i] = x_new[i];                    // each node writes its own blocks
//     squall::tsm::barrier();  // written blocks reach their readers here
//   }
//
// Ownership: a block is written by its home only (choose the homes to match the partition:
// tsm::options::homes); a store by another node ends the job with a message naming the block.
// Other nodes read. Phases: the program's barriers (tsm::barrier, allreduce, PARMACS
// BARRIER). Consistency: what a node reads after a barrier is what the homes wrote before it;
// within a phase, another node's block reads as it was at the last barrier (or when this node
// missed on it), so a program must not read in a phase what another node writes in it.
//
// Recording: until the recording's last barrier (the first, unless the constructor says
// more), a read of another node's block misses, fetches the block from its home and is
// recorded there as a consumer. That barrier sets up a virtual channel from each home to each
// of its consumers (squall/channel.hpp). At every barrier from then on, each home sends each
// consumer one message holding every block it wrote in the phase that this consumer reads,
// and the consumer installs them ReadOnly. A node that first reads a block later misses once
// and is recorded as a late consumer: its pushes go as one block message each, answered,
// beside the channel (as do the pushes of barriers within the recording, before the channel
// exists). libxsm/PROTOCOLS.md has the states and messages.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <squall/channel.hpp>
#include <squall/xsm/protocol.hpp>

namespace squall::xsm {

class block_update final : public protocol {
 public:
  // Blocks of 4 KiB (a page) up to this size: a push copies the whole block to every consumer
  // whenever any byte of it changed, so larger blocks mostly send bytes nobody reads.
  static constexpr std::size_t largest_block = 64 * 1024;

  // Consumers are recorded until the `recording_barriers`-th barrier after the memory is
  // allocated: count the barriers of the program's setup and of its first iteration, so that
  // the first iteration's reads are recorded. usage_error for 0.
  explicit block_update(unsigned recording_barriers = 1);
  ~block_update() override;

  std::string_view name() const override { return "block-update"; }
  std::string refuse_block_size(std::size_t block_size) const override;
  void attach(block_index first, block_index end, std::size_t block_size) override;
  void started(segment s) override { segment_ = s; }
  void detach() override;
  void read_fault(segment s, block_index b) override;
  void write_fault(segment s, block_index b) override;
  // The home learns its writes at phase ends; a store to a copy is found there too.
  bool records_writes() const override { return true; }
  // The phase end: written blocks go to their consumers (and the recording may end).
  void before_barrier() override;

  // Whether the recording's last barrier is still to come.
  bool recording() const { return recording_.load(std::memory_order_relaxed); }

  // Message handlers (squall/xsm/protocol.hpp); not for the program.
  void on_request(segment s, block_index b, int from);                    // home
  void on_grant(segment s, block_index b, int home, block_part bytes);    // consumer
  void on_push(segment s, block_index b, int home, block_part bytes);     // a push outside the channel
  void on_push_done(segment s, block_index b, int consumer);             // home

  // This node's counts (and a total per name in the statistics table).
  protocol_counter misses{"xsm.block_update.misses"};  // reads of others' blocks that fetched
  protocol_counter misses_after_recording{"xsm.block_update.misses_after_recording"};
  protocol_counter requests_served{"xsm.block_update.requests_served"};  // as home
  protocol_counter late_consumers{"xsm.block_update.late_consumers"};  // recorded after the recording
  protocol_counter pushes{"xsm.block_update.pushes"};  // (block, consumer) copies sent as home
  protocol_counter push_messages{"xsm.block_update.push_messages"};  // channel messages with blocks + block messages
  protocol_counter push_bytes{"xsm.block_update.push_bytes"};  // their bytes (8-byte block numbers included)
  protocol_counter phases{"xsm.block_update.phases"};  // barriers seen

 private:
  void end_recording();
  void send_channel_round();
  void install_received();
  static void pack_locked(void* self);

  struct home_state;  // the home side (private header), allocated in attach
  std::unique_ptr<home_state> home_;
  segment segment_;
  block_index first_ = 0, end_ = 0;
  std::size_t block_size_ = 0;
  unsigned recording_barriers_;
  unsigned barriers_ = 0;  // seen since attach
  std::atomic<bool> recording_{true};  // read by the home's handlers
  std::vector<std::size_t> consumed_from_;  // blocks this node fetched from each home while recording
  std::atomic<bool> granted_{false};
  std::unique_ptr<channel_set> channel_;
};

}  // namespace squall::xsm
