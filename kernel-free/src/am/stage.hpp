// SPDX-License-Identifier: BSD-3-Clause
// Records that the program's thread appends for one destination without taking the node
// lock, when messages are aggregated (SQUALL_AGGREGATION > 1).
//
// Why: with aggregation a small send costs about 14 ns, and a third of that was the node
// lock's atomic exchange (measured with perf on am_stream's sender). A stage is a
// single-producer single-consumer buffer: the producer is the thread that started the
// runtime, appending from outside handlers with plain stores and a release; the consumer is
// whoever holds the node lock, which takes what was published into the destination's packet
// before it appends anything else for that destination (a handler's send, a flush). So
// records keep the order in which they were sent, whatever thread sends next.
//
// The buffer is linear: the producer starts again from its beginning only while it holds the
// node lock itself, after the consumer side took everything (reset()).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace squall::am {

class stage {
 public:
  void init(std::size_t capacity) {
    buffer_.reset(new std::byte[capacity]);
    capacity_ = capacity;
  }

  // Producer: where a record of `bytes` goes, or nullptr when it does not fit now.
  std::byte* reserve(std::size_t bytes) const {
    return end_ + bytes <= capacity_ ? buffer_.get() + end_ : nullptr;
  }
  // Producer: makes the reserved record visible to the consumer side.
  void publish(std::size_t bytes) {
    end_ += bytes;
    ++records_;
    produced_.store(records_ << 32 | end_, std::memory_order_release);
  }
  // Producer: records published and not taken yet.
  std::uint64_t waiting_records() const {
    return records_ - (consumed_.load(std::memory_order_relaxed) >> 32);
  }
  // Producer holding the node lock, after take() of everything: start from the beginning.
  void reset() {
    end_ = 0;
    records_ = 0;
    produced_.store(0, std::memory_order_relaxed);
    consumed_.store(0, std::memory_order_relaxed);
  }

  // Consumer (node lock held): the published bytes not taken yet, then take() them.
  struct portion {
    std::span<const std::byte> bytes;
    std::uint64_t mark;  // what take() records
  };
  portion published() const {
    const std::uint64_t from = consumed_.load(std::memory_order_relaxed) & bytes_mask;
    const std::uint64_t to = produced_.load(std::memory_order_acquire);
    return {{buffer_.get() + from, (to & bytes_mask) - from}, to};
  }
  void take(const portion& p) { consumed_.store(p.mark, std::memory_order_relaxed); }

  // Any thread: whether published bytes wait.
  bool empty() const {
    return produced_.load(std::memory_order_relaxed) == consumed_.load(std::memory_order_relaxed);
  }

 private:
  static constexpr std::uint64_t bytes_mask = 0xffffffffu;
  std::unique_ptr<std::byte[]> buffer_;
  std::size_t capacity_ = 0;
  std::uint64_t end_ = 0;      // producer's copy of the bytes in produced_
  std::uint64_t records_ = 0;  // producer's copy of the records in produced_
  // (records << 32 | bytes): written by the producer, and by the node-lock holder as it
  // takes them, so that the producer knows how many records still wait.
  std::atomic<std::uint64_t> produced_{0};
  std::atomic<std::uint64_t> consumed_{0};
};

}  // namespace squall::am
