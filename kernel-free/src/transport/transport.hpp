// SPDX-License-Identifier: BSD-3-Clause
// The interface between the message layer and a transport. The active-message engine
// moves whole packets through it and never asks which transport it runs on.
#pragma once
#include <cstddef>
#include <span>

namespace squall {

namespace shm {
class shm_transport;
}

// Writes a packet body of a known size straight into a transport's buffer.
struct body_writer {
  void (*fn)(void* ctx, std::byte* out);
  void* ctx;
  void operator()(std::byte* out) const { fn(ctx, out); }
};

class transport {
 public:
  virtual ~transport() = default;

  // Sends one packet (head followed by body) to `dest`, waking it if no thread of it is
  // polling. False when there is no room now; the transport then signals this node when
  // room appears, and the caller retries from its progress loop.
  virtual bool try_send(int dest, std::span<const std::byte> head,
                        std::span<const std::byte> body) = 0;
  // The same, with the body (`body_size` bytes) written in place by `write`, which runs
  // only when the packet is accepted.
  virtual bool try_send_written(int dest, std::span<const std::byte> head, std::size_t body_size,
                                body_writer write) = 0;
  // The next packet from `src`, or an empty span; valid until release(src).
  virtual std::span<const std::byte> peek(int src) = 0;
  virtual void release(int src) = 0;
  virtual bool any_incoming() = 0;
  // The same for a thread spinning in a wait: may say no for a while after a send when
  // looking would slow the reply down (shm/mailbox.hpp). Never used to decide to sleep.
  virtual bool worth_polling() { return any_incoming(); }
  // Packets already taken in and waiting to be handled, without looking at the network
  // (a network transport's I/O thread or a poller takes them in). For a thread that must
  // not progress the network beside a program thread that may be inside it.
  virtual bool any_queued() { return any_incoming(); }
  virtual std::size_t max_packet() const = 0;
  // Whether a transfer is under way that moves only while a thread of this node progresses
  // the transport (a rendezvous of UCX over TCP, whose data goes out or comes in a socket
  // buffer at a time): a waiter then keeps polling instead of sleeping, since each wake-up
  // would otherwise hold the data up (runtime/waiting.cpp).
  virtual bool moving_data() { return false; }
  // Called by a thread of this node before it sleeps until a doorbell (the transport may
  // have to watch for arrivals itself meanwhile).
  virtual void node_sleeps() {}
  // Called by a thread of this node that polls again (woke from its doorbell, or entered a
  // wait with nobody polling): a transport watching for it should step aside.
  virtual void node_polls() {}
  // Wakes every peer that has not taken (or not answered) this node's packets, even one that
  // counts as polling: a waiter whose reply is late calls it (runtime/waiting.cpp, nudges).
  virtual void nudge_peers() {}
  // Gives the processor of every peer whose program computes while this node's packets wait
  // to that peer's progress thread: a waiter about to sleep calls it (common/poke.hpp).
  virtual void poke_stalled_peers() {}
  // Optional, where sends_large(dest): one packet of `head` followed by all of `data`, however
  // large, sent without copying `data` (as UCX's rendezvous moves a buffer); `done(ctx)` runs,
  // on any thread, once the transport reads `data` no more. False: no room now (retry later).
  // Elsewhere the engine sends large transfers in fragments of max_packet.
  virtual bool sends_large(int /*dest*/) const { return false; }
  virtual bool try_send_large(int /*dest*/, std::span<const std::byte> /*head*/, std::span<const std::byte> /*data*/,
                              void (*/*done*/)(void*), void* /*ctx*/) {
    return false;
  }
  // The mailbox lane to and from `peer` (kernel-free/TRANSPORTS.md): the shared-memory
  // transport that carries its packets, whose mailboxes the message layer then writes and
  // reads itself, without virtual calls; nullptr when its packets take another way.
  virtual shm::shm_transport* mailbox_lane(int /*peer*/) { return nullptr; }
};

}  // namespace squall
