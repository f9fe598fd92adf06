// SPDX-License-Identifier: BSD-3-Clause
// A single-producer single-consumer ring of variable-size packets in shared memory.
//
// Hand-written rather than boost::lockfree::spsc_queue because a packet must cross with
// one cache-line transfer: the consumer polls the packet's own header word (written last,
// with release) instead of a separate write index, and the producer re-reads the
// consumer's position only when its cached view says the ring is full. spsc_queue keeps
// both indices apart from the data (two or three line transfers per packet) and holds
// fixed-size elements, not packets of any length.
//
// Layout: a 64-byte control line (the consumer's published position and the producer's
// "waiting for room" flag), then `capacity` bytes of data. Each packet is an 8-byte header
// (length, and a wrap flag) and its body rounded up to 8 bytes. The producer zeroes the
// header slot after each packet before publishing it, so an empty slot always reads 0.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#if defined(SQUALL_TSAN)
#define SQUALL_RING_HINT __attribute__((no_sanitize("thread")))
#else
#define SQUALL_RING_HINT
#endif

namespace squall::shm {

struct alignas(64) ring_control {
  std::atomic<std::uint64_t> tail;              // bytes consumed, published by the consumer
  std::atomic<std::uint32_t> producer_waiting;  // set by a producer that found no room
  // The sequence number of the last packet the consumer took from the pair's mailbox
  // (mailbox.hpp): written on every take, read only by a producer deciding on a nudge
  // (shm_transport::nudge_peers), so the line stays with the consumer.
  std::atomic<std::uint32_t> mail_taken;
};
static_assert(sizeof(ring_control) == 64);

constexpr std::size_t ring_stride(std::size_t capacity) { return sizeof(ring_control) + capacity; }

class ring_producer {
 public:
  ring_producer() = default;
  ring_producer(void* base, std::size_t capacity);

  // Copies head then body as one packet (at least one byte: an empty span means "no
  // packet" to the consumer); false when there is no room now, in which case the
  // producer_waiting flag asks the consumer to signal when it frees space.
  bool try_push(std::span<const std::byte> head, std::span<const std::byte> body = {});
  // The same in two steps, for a producer that writes the packet in place: where to write
  // `length` bytes (or nullptr and the same waiting flag as try_push), then commit() to
  // publish them. Nothing else may be pushed in between.
  std::byte* try_reserve(std::size_t length);
  void commit();
  std::size_t max_packet() const { return capacity_ / 4; }
  // Bytes produced so far: where the next packet goes (the shared-memory mailbox orders its
  // packets against the ring by it).
  std::uint64_t position() const { return head_; }
  // Whether the consumer has not yet taken every packet produced.
  bool unread() const { return ctl_ != nullptr && head_ != ctl_->tail.load(std::memory_order_acquire); }
  std::uint32_t mail_taken() const { return ctl_ == nullptr ? 0 : ctl_->mail_taken.load(std::memory_order_acquire); }

 private:
  ring_control* ctl_ = nullptr;
  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
  std::uint64_t head_ = 0;         // bytes produced
  std::uint64_t cached_tail_ = 0;  // last seen consumer position
  struct reservation {
    std::size_t length = 0, at = 0, pos = 0, advance = 0;
    bool wraps = false;
  } reserved_;
};

class ring_consumer {
 public:
  ring_consumer() = default;
  ring_consumer(void* base, std::size_t capacity);
  ring_consumer(ring_consumer&& o) noexcept
      : ctl_(o.ctl_), data_(o.data_), capacity_(o.capacity_), tail_(o.tail_.load()), peeked_(o.peeked_) {}
  ring_consumer& operator=(ring_consumer&& o) noexcept {
    ctl_ = o.ctl_;
    data_ = o.data_;
    capacity_ = o.capacity_;
    tail_.store(o.tail_.load());
    peeked_ = o.peeked_;
    return *this;
  }

  // The next packet's body, or an empty span. Stays valid until release().
  std::span<const std::byte> peek() { return take(header()); }
  // The same in two steps: the header word at the read position (0: no packet yet), then
  // the packet it announces (an empty span for 0).
  std::uint64_t header() const {  // inline: waiters spin on it
    auto* word = reinterpret_cast<std::uint64_t*>(data_ + (tail_.load(std::memory_order_relaxed) & (capacity_ - 1)));
    return std::atomic_ref<std::uint64_t>(*word).load(std::memory_order_acquire);
  }
  std::span<const std::byte> take(std::uint64_t header);
  // Bytes consumed so far, in the producer's position() numbering.
  std::uint64_t position() const { return tail_.load(std::memory_order_relaxed); }
  void note_mail_taken(std::uint32_t seq) { ctl_->mail_taken.store(seq, std::memory_order_release); }
  // Frees the packet returned by peek(). Returns true when the producer was waiting for
  // room (the caller then wakes the producer's node).
  bool release();
  // Whether no packet waits. Also asked without the node lock (a spinning waiter, the progress
  // thread choosing between polling and sleeping), where it is a hint that the poll after it
  // settles. Such a reader can be preempted between loading the read position and the word
  // there, and meanwhile the consumer moves on and the producer, having lapped the ring,
  // writes a packet's body over that word. ThreadSanitizer rightly calls that a race between
  // the atomic load and the body's memcpy; the answer is then only wrong as a hint, so the
  // check is not instrumented.
  SQUALL_RING_HINT bool empty() const {
    const auto* word = reinterpret_cast<const std::uint64_t*>(data_ + (tail_.load(std::memory_order_relaxed) & (capacity_ - 1)));
    return __atomic_load_n(word, __ATOMIC_ACQUIRE) == 0;
  }

 private:
  ring_control* ctl_ = nullptr;
  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
  // Written only by the consumer (under its node lock); atomic so that empty() may be asked
  // from a thread that does not hold the lock.
  std::atomic<std::uint64_t> tail_{0};
  std::size_t peeked_ = 0;  // size of the peeked packet including its header, 0 if none
};

}  // namespace squall::shm
