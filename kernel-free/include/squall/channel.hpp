// SPDX-License-Identifier: BSD-3-Clause
// Virtual channels (Tempest): preset receive buffers between every pair of nodes, written in
// numbered rounds. A protocol that moves bulk data in phases (one message per pair per phase)
// sends it straight into the buffer its receiver set aside for it, with no allocation after
// the channel set is made and one copy on the receiving side.
//
//   // Every node: up to 4 ints from the left neighbour each round, nothing from the others.
//   const int n = squall::nodes(), me = squall::node();
//   std::vector<std::size_t> capacity(n, 0);
//   capacity[(me + n - 1) % n] = 4 * sizeof(int);
//   squall::channel_set ch(capacity);                     // collective
//   for (int step = 0; step < steps; ++step) {
//     const int right = (me + 1) % n;
//     ch.send_last(right, 0, std::as_bytes(std::span(mine)));  // data, and the round ends
//     ch.wait_round();                                     // every expected peer has ended
//     for (int p = 0; p < n; ++p) combine(ch.received_as<int>(p));   // node order
//   }
//
// Capacities. The constructor is collective (every node calls it, in the same order as the
// other collectives) and takes, per peer, how many bytes this node receives from that peer in
// one round; the buffers are allocated there, once. Capacity > 0 means "this peer ends every
// round towards me": the receiver knows whom to expect, so an empty round costs one small
// end-of-round message per pair. Capacity 0 means the peer never sends to this node.
//
// Rounds. A node's round r begins at its first send, end_round, wait_round or begin_round after
// the previous wait_round returned (round 0: after construction). In it the node may send to every
// peer that declared a capacity for it, any number of sends, each landing at `offset` of that
// peer's buffer for this node; then it ends the round towards that peer (end_round, or
// send_last for the last piece). Before wait_round it must have ended the round towards every
// such peer. wait_round waits until every peer this node expects has ended its round r, then
// received(p) is the data of round r from p: bytes [0, e) of the buffer, e being the end of
// the furthest send of the round (0 if p sent nothing). It stays valid until this node begins
// round r + 1. Combining in node order p = 0, 1, ... gives the same result on every run.
//
// Flow control: credits, one buffer per pair. A node beginning round r > 0 sends each peer it
// expects data from a credit for round r (it has finished reading round r - 1, so the buffers
// may be written again); a sender's first message of round r to a peer waits for that peer's
// credit. Round 0 needs none. A fast sender can thus be at most one round ahead of a reader
// and never overwrites data not yet read. Credits go out when the round begins, before this
// node waits for anything, so nodes exchanging in both directions do not wait for each other.
//
// Sends to this node itself are copies into its own buffer. Data is copied out of the
// caller's memory before send returns. Pieces larger than am::max_payload() travel as several
// active messages, each copied once, by its handler, into the preset buffer (am::bulk_send is
// not used: it reassembles into a buffer it allocates and hands that to the handler, a second
// copy). The handlers are ordinary message handlers, so fence() counts them.
//
// Waiting goes through am::wait_until: a node lost mid-round is reported, not waited for.
// One thread uses a channel set at a time. Errors are usage_error: a bad node, a send to a
// peer with capacity 0 for this node, a send past that capacity, a send after the round ended
// towards that peer, wait_round before the round ended towards every peer that expects this
// node, received() while a round is open, and destroying a channel set while a round is open.
//
// Counters (squall/stats.hpp): channel.messages_sent (send and send_last calls, to this node
// too; end_round is not counted), channel.bytes_sent (their bytes), channel.rounds (wait_round
// calls that returned) and channel.waits (those that found some expected peer not yet done).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>

namespace squall {

namespace detail {
struct channel_state;
}

class channel_set {
 public:
  // capacity[p]: bytes this node can receive from node p per round (0: nothing from p). Its
  // size must be nodes(). Collective.
  explicit channel_set(std::span<const std::size_t> capacity);
  // Throws usage_error when a round is open (unless an exception is already propagating).
  ~channel_set() noexcept(false);
  channel_set(const channel_set&) = delete;
  channel_set& operator=(const channel_set&) = delete;

  std::size_t capacity_from(int peer) const;  // what this node receives from peer per round
  std::size_t capacity_to(int peer) const;    // what peer receives from this node per round
  std::uint64_t round() const;                // the round being sent or awaited (0 first)

  // Copies data to [offset, offset + size) of peer's buffer for this node.
  void send(int peer, std::size_t offset, std::span<const std::byte> data);
  // send, then end_round(peer), in one message.
  void send_last(int peer, std::size_t offset, std::span<const std::byte> data);
  // This node sends peer nothing more this round.
  void end_round(int peer);
  // end_round for every peer expecting this node whose round is not yet ended.
  void end_round();

  // Begins this node's next round now rather than at its first send: this node is done
  // reading the last round's data, so the peers writing to it get their credits at once and
  // their first sends of the round need not wait for this node to reach it. received() is
  // then closed. The credits then reach peers that may be computing, and wake their progress
  // threads: where the nodes have no spare cores that costs more than it saves (a reduction
  // exchanging every phase, 2 nodes on 2 cores: 12 ms more in 57).
  void begin_round();

  // Waits until every expected peer has ended this round; then the round's data is readable.
  void wait_round();
  // The data peer sent in the round wait_round ended (empty when peer sent nothing).
  std::span<const std::byte> received(int peer) const;
  template <class T>
  std::span<const T> received_as(int peer) const {
    static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= alignof(std::max_align_t));
    const auto bytes = received(peer);
    check_multiple(peer, bytes.size(), sizeof(T));
    return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
  }

 private:
  void check_multiple(int peer, std::size_t bytes, std::size_t elem) const;
  std::unique_ptr<detail::channel_state> state_;
};

}  // namespace squall
