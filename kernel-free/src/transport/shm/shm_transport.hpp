// SPDX-License-Identifier: BSD-3-Clause
// Shared-memory transport: one ring per ordered pair of this host's nodes in the job's
// mapping, a one-packet mailbox line per pair, which the two sides take turns to write, for
// small packets of request/reply exchanges (mailbox.hpp), and a futex doorbell per node rung
// only when no thread of the receiver is polling.
#pragma once
#include <vector>

#include <memory>

#include "transport/shm/job_area.hpp"
#include "transport/shm/mailbox.hpp"
#include "transport/shm/ring.hpp"
#include "transport/transport.hpp"

namespace squall::shm {

class shm_transport final : public transport {
 public:
  shm_transport(const job_area& job, int me);

  bool try_send(int dest, std::span<const std::byte> head, std::span<const std::byte> body) override;
  bool try_send_written(int dest, std::span<const std::byte> head, std::size_t body_size,
                        body_writer write) override;
  std::span<const std::byte> peek(int src) override;
  void release(int src) override;
  bool any_incoming() override;
  bool worth_polling() override { return spin_incoming(); }
  // The same without a virtual call (the message layer's mailbox lane).
  bool spin_incoming() const {
    for (const int i : local_) {
      if (!in_[i].empty() || mail_[i].worth_looking()) return true;
    }
    return false;
  }
  std::size_t max_packet() const override { return out_[me_].max_packet(); }

  // Wakes `node` if none of its threads is polling: its program threads asleep in a wait if
  // it has any, else all its sleepers; only the former when this thread sends quietly
  // (am::quiet_sends).
  void ring_doorbell(int node);
  // Rings the doorbell of every peer of this host that lingers (job_area.hpp) and has not
  // taken every packet of this node's, from the ring or the mailbox.
  void nudge_peers() override;
  // Pokes the main thread of every peer of this host that has not taken all of this node's
  // packets and whose main thread the kernel shows running (common/poke.hpp).
  void poke_stalled_peers() override;

  // Every peer this transport carries packets for has a mailbox lane here (none for this
  // node itself: its mailbox stays unattached, so try_send_mail says no).
  shm_transport* mailbox_lane(int /*peer*/) override { return this; }

  // The lane for small request/reply packets, called without a virtual call by the message
  // layer (am/engine.hpp), which reaches this transport through mailbox_lane(), also behind
  // the routed transport of a job spanning hosts. The same rules as try_send and peek: a
  // packet (head + body) goes to the mailbox when this side holds the line's turn, and is
  // taken from it when nothing in the ring is ahead of it.
  // The body (body_size bytes) is written by write(where) straight into the line.
  template <class Write>
  bool try_send_mail(int dest, std::span<const std::byte> head, std::size_t body_size, Write&& write) {
    mailbox& m = mail_[dest];
    if (head.size() + body_size > mailbox::max_packet || !m.can_send()) return false;
    m.send(head, body_size, write, out_[dest].position());
    mail_sent(dest, head.size() + body_size);
    return true;
  }
  bool try_send_mail(int dest, std::span<const std::byte> head, std::span<const std::byte> body = {}) {
    return try_send_mail(dest, head, body.size(), [body](std::byte* p) {
      if (!body.empty()) std::memcpy(p, body.data(), body.size());
    });
  }
  // The waiting mailbox packet from `src` (copied out, valid until the next take), or an
  // empty span.
  std::span<const std::byte> take_mail(int src) {
    mailbox& m = mail_[src];
    const std::uint64_t word = m.incoming();
    if (word == 0 || mailbox::position_of(word) != static_cast<std::uint32_t>(in_[src].position())) return {};
    return take_from_mailbox(src, word);
  }
  // Whether a mailbox packet waits, for a spinning waiter (mailbox::worth_looking).
  bool mail_waiting() const {
    for (const int i : local_) {
      if (mail_[i].worth_looking()) return true;
    }
    return false;
  }
  // Polls after a mailbox send that do not look at that peer's mailbox, and whether the
  // mailbox line is pushed to the shared cache after a send (mailbox.hpp).
  void set_mailbox_tuning(int quiet_polls, int most_quiet_polls, bool demote);

 private:
  // Copies out the mailbox packet of `word` from `src` and tells its sender, through the
  // pair's ring, that it was taken (nudge_peers reads it).
  std::span<const std::byte> take_from_mailbox(int src, std::uint64_t word) {
    const auto packet = mail_[src].take(word);
    in_[src].note_mail_taken(mail_[src].taken());
    return packet;
  }

  const job_area& job_;
  int me_;
  std::vector<ring_producer> out_;  // by destination
  std::vector<ring_consumer> in_;   // by source
  std::unique_ptr<mailbox[]> mail_;  // by peer (unattached for this node and other hosts' nodes)
  std::vector<bool> peeked_mail_;    // by source: the packet peek() returned came from the mailbox
  // By destination: whether the last packet sent there was quiet (am::quiet_sends); nudges
  // and pokes leave such a peer alone.
  std::unique_ptr<std::atomic<bool>[]> quiet_;
  std::vector<int> local_;          // the nodes with rings: those on this host
  void mail_sent(int dest, std::size_t bytes);  // rings the doorbell, counts
};

}  // namespace squall::shm
