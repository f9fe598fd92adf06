// SPDX-License-Identifier: BSD-3-Clause
// A one-packet mailbox for each direction between two nodes of a host, both in one cache
// line, beside the pair's two rings.
//
// Why: on the development VM a round trip whose request and reply cross in one cache line
// costs what a raw flag ping-pong costs (0.12 us), while a request in one line and its reply
// in another costs 0.25-0.30 us, however the two lines lie (adjacent, apart, fixed or moving
// through a ring). A ring per direction can never share a line between a request and its
// reply, so small packets of a request/reply exchange travel here instead.
//
// Rules that keep it exact:
// - A slot is reused only once the other side has said it took the packet in it. It says so
//   by carrying the packet's sequence number as `ack` in its own slot's next packet: nobody
//   ever writes into the other side's slot (measured: a consumer that clears the slot it read
//   makes the round trip as slow as two lines). Without that word the sender uses the ring,
//   so a one-way stream flows through the ring and never waits here.
// - Order with the ring: a packet carries the ring's write position at the time it was sent
//   (`pos`). The receiver takes it when its own ring read position has reached `pos`, before
//   any ring packet at that position; it reads the ring's header before the mailbox, so a ring
//   packet sent after a mailbox packet is never seen without it.
// - The receiver copies the packet out at once, so the slot may be refilled while its handler
//   still runs.
// - After a send, the line is pushed to the shared cache (demote_line, when set_demote):
//   the other side's next read then finds it there rather than in this core.
// - After a send, worth_looking() says no for the next `quiet` polls (set_quiet_polls): the
//   other side is working on the line, and a read would take it from under it (on the
//   development VM a read moves a line away from its writer; kernel-free/TRANSPORTS.md).
//   Only a spinning waiter asks it; has_packet(), which decides whether a thread may sleep,
//   always looks.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "common/cache_hint.hpp"

namespace squall::shm {

struct alignas(64) pair_line {
  struct slot {
    // bits 0-7 length, 8-15 sequence number, 16-23 ack (the sequence number of the last
    // packet this side took from the other slot), 32-63 the sender's ring position (low bits).
    std::atomic<std::uint64_t> word;
    std::byte body[24];
  } slots[2];
};
static_assert(sizeof(pair_line) == 64);

class mailbox {
 public:
  static constexpr std::size_t max_packet = sizeof(pair_line::slot::body);

  // Unattached, a mailbox never sends and never has a packet (a node's own pair, or a peer
  // on another host). `out_side` is this node's slot in the line: 0 for the lower node id.
  void attach(pair_line* line, int out_side) {
    out_ = &line->slots[out_side];
    in_ = &line->slots[1 - out_side];
  }

  // Whether a packet may be put now: the other side took the last one.
  bool can_send() const { return out_ != nullptr && acked_ == sent_; }
  std::uint8_t sent() const { return sent_; }    // the sequence number of the last packet put
  std::uint8_t taken() const { return taken_.load(std::memory_order_relaxed); }  // and taken
  // Publishes head + body (at most max_packet bytes) with the ring position `ring_pos`.
  void send(std::span<const std::byte> head, std::span<const std::byte> body, std::uint64_t ring_pos) {
    std::memcpy(out_->body, head.data(), head.size());
    if (!body.empty()) std::memcpy(out_->body + head.size(), body.data(), body.size());
    sent_ = static_cast<std::uint8_t>(sent_ + 1);
    const std::uint64_t w = (ring_pos << 32) | std::uint64_t{taken_.load(std::memory_order_relaxed)} << 16 |
                            std::uint64_t{sent_} << 8 | (head.size() + body.size());
    out_->word.store(w, std::memory_order_release);
    if (demote_) demote_line(out_);
    quiet_.store(quiet_polls_, std::memory_order_relaxed);
  }
  void set_quiet_polls(int polls) { quiet_polls_ = polls; }
  void set_demote(bool on) { demote_ = on; }

  // Whether a packet not yet taken waits (any thread; no side effects).
  bool has_packet() const { return in_ != nullptr && is_new(in_->word.load(std::memory_order_acquire)); }
  // The same for a spinning waiter, except in the quiet polls after a send (any thread: the
  // count is a hint, which racing threads may miscount).
  bool worth_looking() const {
    if (const int q = quiet_.load(std::memory_order_relaxed); q > 0) {
      quiet_.store(q - 1, std::memory_order_relaxed);
      return false;
    }
    return has_packet();
  }
  // The waiting packet's word, or 0 when none waits.
  std::uint64_t incoming() const {
    if (in_ == nullptr) return 0;
    const std::uint64_t w = in_->word.load(std::memory_order_acquire);
    return is_new(w) ? w : 0;
  }
  static std::uint32_t position_of(std::uint64_t word) { return static_cast<std::uint32_t>(word >> 32); }
  // Takes the packet of `word` (from incoming()): copies it out and notes its ack.
  std::span<const std::byte> take(std::uint64_t word) {
    const std::size_t len = word & 0xff;
    std::memcpy(copy_, in_->body, max_packet);
    taken_.store(static_cast<std::uint8_t>(word >> 8), std::memory_order_relaxed);
    acked_ = static_cast<std::uint8_t>(word >> 16);
    return {copy_, len};
  }

 private:
  bool is_new(std::uint64_t w) const {
    return static_cast<std::uint8_t>(w >> 8) == static_cast<std::uint8_t>(taken_.load(std::memory_order_relaxed) + 1);
  }

  pair_line::slot* out_ = nullptr;
  pair_line::slot* in_ = nullptr;
  std::uint8_t sent_ = 0;   // sequence number of the last packet put
  std::uint8_t acked_ = 0;  // the last of ours the other side said it took
  // The last packet taken; read without the node lock by has_packet().
  std::atomic<std::uint8_t> taken_{0};
  int quiet_polls_ = 0;
  bool demote_ = false;
  mutable std::atomic<int> quiet_{0};  // polls left that do not look (any thread)
  alignas(8) std::byte copy_[max_packet];
};

}  // namespace squall::shm
