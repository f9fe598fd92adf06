// SPDX-License-Identifier: BSD-3-Clause
#include "transport/shm/ring.hpp"

#include <cassert>
#include <cstring>

namespace squall::shm {
namespace {

constexpr std::uint64_t wrap_flag = 1ull << 33;
constexpr std::uint64_t valid_flag = 1ull << 32;
constexpr std::size_t header_bytes = 8;

std::size_t round8(std::size_t n) { return (n + 7) & ~std::size_t{7}; }

std::atomic_ref<std::uint64_t> header_at(std::byte* data, std::size_t pos) {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(data + pos));
}

}  // namespace

ring_producer::ring_producer(void* base, std::size_t capacity)
    : ctl_(static_cast<ring_control*>(base)),
      data_(static_cast<std::byte*>(base) + sizeof(ring_control)),
      capacity_(capacity) {}

bool ring_producer::try_push(std::span<const std::byte> head, std::span<const std::byte> body) {
  std::byte* out = try_reserve(head.size() + body.size());
  if (out == nullptr) return false;
  if (!head.empty()) std::memcpy(out, head.data(), head.size());
  if (!body.empty()) std::memcpy(out + head.size(), body.data(), body.size());
  commit();
  return true;
}

std::byte* ring_producer::try_reserve(std::size_t length) {
  assert(length > 0 && length <= max_packet());
  const std::size_t size = header_bytes + round8(length);
  const std::size_t pos = head_ & (capacity_ - 1);
  // A packet never straddles the end: when it would not fit (with the zeroed slot after
  // it), a wrap marker sends the consumer back to offset 0.
  const bool wraps = pos + size + header_bytes > capacity_;
  const std::size_t at = wraps ? 0 : pos;
  const std::size_t needed = (wraps ? capacity_ - pos : 0) + size + header_bytes;
  if (head_ + needed - cached_tail_ > capacity_) {
    cached_tail_ = ctl_->tail.load(std::memory_order_acquire);
    if (head_ + needed - cached_tail_ > capacity_) {
      ctl_->producer_waiting.store(1, std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_seq_cst);
      cached_tail_ = ctl_->tail.load(std::memory_order_acquire);
      if (head_ + needed - cached_tail_ > capacity_) return nullptr;
    }
  }
  reserved_ = {length, at, pos, needed - header_bytes, wraps};
  return data_ + at + header_bytes;
}

void ring_producer::commit() {
  const reservation& r = reserved_;
  header_at(data_, r.at + header_bytes + round8(r.length)).store(0, std::memory_order_relaxed);
  header_at(data_, r.at).store(valid_flag | r.length, std::memory_order_release);
  if (r.wraps) header_at(data_, r.pos).store(wrap_flag, std::memory_order_release);
  head_ += r.advance;
}

ring_consumer::ring_consumer(void* base, std::size_t capacity)
    : ctl_(static_cast<ring_control*>(base)),
      data_(static_cast<std::byte*>(base) + sizeof(ring_control)),
      capacity_(capacity) {}

std::span<const std::byte> ring_consumer::take(std::uint64_t h) {
  if (h == 0) return {};
  std::uint64_t tail = tail_.load(std::memory_order_relaxed);
  std::size_t pos = tail & (capacity_ - 1);
  if (h & wrap_flag) {
    // The packet at offset 0 was published before this marker, so it is there.
    tail += capacity_ - pos;
    tail_.store(tail, std::memory_order_relaxed);
    pos = 0;
    h = header_at(data_, 0).load(std::memory_order_acquire);
  }
  const std::size_t len = h & 0xffffffffu;
  peeked_ = header_bytes + round8(len);
  return {data_ + pos + header_bytes, len};
}

bool ring_consumer::release() {
  const std::uint64_t tail = tail_.load(std::memory_order_relaxed) + peeked_;
  tail_.store(tail, std::memory_order_relaxed);
  peeked_ = 0;
  // seq_cst pairs with the producer's fence: either it sees this tail or we see its flag.
  ctl_->tail.store(tail, std::memory_order_seq_cst);
  if (ctl_->producer_waiting.load(std::memory_order_relaxed) == 0) return false;
  ctl_->producer_waiting.store(0, std::memory_order_relaxed);
  return true;
}

}  // namespace squall::shm
