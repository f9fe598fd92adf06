// SPDX-License-Identifier: BSD-3-Clause
// A one-packet mailbox in one cache line between two nodes of a host, beside the pair's
// two rings, that the two sides take turns to write: a request, then its reply in its place.
//
// Why: on the development VM a round trip whose request and reply cross in one cache line
// costs what a raw flag ping-pong costs (0.12 us), while a request in one line and its reply
// in another costs 0.25-0.30 us, however the two lines lie (adjacent, apart, fixed or moving
// through a ring). A ring per direction can never share a line between a request and its
// reply, so small packets of a request/reply exchange travel here instead. One slot for both
// directions, rather than one for each, lets a packet fill the line: 56 bytes, enough for a
// record header and a small message (a libarrays invoke; a TSM request), not just 8 bytes of
// arguments.
//
// Rules that keep it exact:
// - Turns: a side may write the line only when it holds the turn. Side 0 holds it at first;
//   a side gives it up by writing a packet and gets it by taking the other side's packet.
//   So the line always holds the last packet of the side without the turn, which nobody
//   overwrites before it was taken, and nobody writes anything else into the line (measured:
//   a consumer that clears what it read makes the round trip as slow as two lines). Without
//   the turn the sender uses the ring, so a one-way stream flows through the ring and never
//   waits here.
// - Order with the ring: a packet carries the ring's write position at the time it was sent
//   (`pos`). The receiver takes it when its own ring read position has reached `pos`, before
//   any ring packet at that position; it reads the ring's header before the mailbox, so a ring
//   packet sent after a mailbox packet is never seen without it.
// - The receiver copies the packet out at once, so the line may be refilled while its handler
//   still runs.
// - After a send, the line is pushed to the shared cache (demote_line, when set_demote):
//   the other side's next read then finds it there rather than in this core.
// - After a send, worth_looking() says no for the next `quiet` polls (set_quiet_polls): the
//   other side is working on the line, and a read would take it from under it (on the
//   development VM a read moves a line away from its writer; kernel-free/TRANSPORTS.md).
//   The window adapts to how long the other side takes to answer (adapt_quiet). Only a
//   spinning waiter asks it; has_packet(), which decides whether a thread may sleep, always
//   looks.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "common/cache_hint.hpp"

namespace squall::shm {

struct alignas(64) pair_line {
  // bits 0-7 length, 8-15 the writer's sequence number (its packets through the line, from
  // 1), 16 the writer's side, 32-63 the writer's ring position (low bits).
  std::atomic<std::uint64_t> word;
  std::byte body[56];
};
static_assert(sizeof(pair_line) == 64);

class mailbox {
 public:
  static constexpr std::size_t max_packet = sizeof(pair_line::body);

  // Unattached, a mailbox never sends and never has a packet (a node's own pair, or a peer
  // on another host). `side` is this node's side of the line: 0 for the lower node id.
  void attach(pair_line* line, int side) {
    line_ = line;
    side_ = static_cast<std::uint64_t>(side);
    turn_ = side == 0;
  }

  // Whether a packet may be put now: this side holds the turn.
  bool can_send() const { return line_ != nullptr && turn_; }
  std::uint8_t sent() const { return sent_; }    // the sequence number of the last packet put
  std::uint8_t taken() const { return taken_.load(std::memory_order_relaxed); }  // and taken
  // Publishes head + body (at most max_packet bytes) with the ring position `ring_pos`, and
  // gives the turn to the other side. The body, body_size bytes, is written by write(where)
  // straight into the line: a body the sender has just built with narrow stores is not read
  // back with wide loads on its way (which would wait for those stores to retire), nor
  // copied twice.
  template <class Write>
  void send(std::span<const std::byte> head, std::size_t body_size, Write&& write, std::uint64_t ring_pos) {
    std::memcpy(line_->body, head.data(), head.size());
    write(line_->body + head.size());
    publish(head.size() + body_size, ring_pos);
  }
  // The quiet looks after a send: at least `least`, and, learnt from when the other side's
  // packets turn up, up to `most` (see adapt_quiet).
  void set_quiet_polls(int least, int most) {
    least_quiet_ = least;
    most_quiet_ = std::max(least, most);
    quiet_.store(least, std::memory_order_relaxed);
  }
  void set_demote(bool on) { demote_ = on; }

  // Whether a packet not yet taken waits (any thread; no side effects).
  bool has_packet() const { return line_ != nullptr && is_new(line_->word.load(std::memory_order_acquire)); }
  // The same for a spinning waiter, except in the quiet polls after a send (any thread: the
  // count is a hint, which racing threads may miscount).
  bool worth_looking() const {
    const int look = looks_.load(std::memory_order_relaxed) + 1;
    looks_.store(look, std::memory_order_relaxed);
    if (look <= quiet_.load(std::memory_order_relaxed)) return false;
    if (!has_packet()) return false;
    if (found_at_.load(std::memory_order_relaxed) == 0) found_at_.store(look, std::memory_order_relaxed);
    return true;
  }
  int quiet_looks() const { return quiet_.load(std::memory_order_relaxed); }  // the window now
  // The waiting packet's word, or 0 when none waits.
  std::uint64_t incoming() const {
    if (line_ == nullptr) return 0;
    const std::uint64_t w = line_->word.load(std::memory_order_acquire);
    return is_new(w) ? w : 0;
  }
  static std::uint32_t position_of(std::uint64_t word) { return static_cast<std::uint32_t>(word >> 32); }
  // Takes the packet of `word` (from incoming()): copies it out, and takes the turn.
  std::span<const std::byte> take(std::uint64_t word) {
    const std::size_t len = word & 0xff;
    std::memcpy(copy_, line_->body, max_packet);  // whole: a fixed size copies inline
    taken_.store(static_cast<std::uint8_t>(word >> 8), std::memory_order_relaxed);
    turn_ = true;
    return {copy_, len};
  }

 private:
  // Makes the line's packet of `len` bytes visible, and gives the turn to the other side.
  void publish(std::size_t len, std::uint64_t ring_pos) {
    sent_ = static_cast<std::uint8_t>(sent_ + 1);
    turn_ = false;
    const std::uint64_t w = (ring_pos << 32) | side_ << 16 | std::uint64_t{sent_} << 8 | len;
    line_->word.store(w, std::memory_order_release);
    if (demote_) demote_line(line_);
    adapt_quiet();
  }

  // Moves the quiet window toward the look at which the other side's last packet was found,
  // so that a waiter stops looking about when the answer comes, however long the other side
  // works between request and reply (libarrays' entry methods: two to three times a bare
  // handler), and does not read the line while that side writes it. Opens by at most two
  // looks, never past the last look that found nothing; closes by a quarter when the packet
  // was there at the first look. Opening slowly and closing fast keeps late answers (a peer
  // descheduled) from propping it open (kernel-free/TRANSPORTS.md).
  void adapt_quiet() {
    const int found = found_at_.load(std::memory_order_relaxed);
    if (found != 0) {
      const int q = quiet_.load(std::memory_order_relaxed);
      const int next = found <= q + 1 ? std::max(least_quiet_, q - std::max(1, q / 4))
                                      : std::min({most_quiet_, q + 2, found - 1});
      quiet_.store(next, std::memory_order_relaxed);
    }
    looks_.store(0, std::memory_order_relaxed);
    found_at_.store(0, std::memory_order_relaxed);
  }

  // A packet of the other side's that this side has not taken.
  bool is_new(std::uint64_t w) const {
    return (w >> 16 & 1) != side_ &&
           static_cast<std::uint8_t>(w >> 8) == static_cast<std::uint8_t>(taken_.load(std::memory_order_relaxed) + 1);
  }

  pair_line* line_ = nullptr;
  std::uint64_t side_ = 0;
  bool turn_ = false;       // whether this side may write the line
  std::uint8_t sent_ = 0;   // sequence number of the last packet put
  // The last packet taken; read without the node lock by has_packet().
  std::atomic<std::uint8_t> taken_{0};
  bool demote_ = false;
  // The quiet window and its bounds, set by the sending side; the looks since its last send
  // and the look that found the other side's packet (0: none yet), counted by any thread
  // that spins (hints: racing threads may miscount).
  std::atomic<int> quiet_{0};
  int least_quiet_ = 0;
  int most_quiet_ = 0;
  mutable std::atomic<int> looks_{0};
  mutable std::atomic<int> found_at_{0};
  alignas(8) std::byte copy_[max_packet];
};

}  // namespace squall::shm
