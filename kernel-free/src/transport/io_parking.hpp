// SPDX-License-Identifier: BSD-3-Clause
// Where a network transport's I/O thread waits while a thread of its node polls the network
// itself (any_incoming): parked on a futex word, out of the poller's way, until a thread of
// the node goes to sleep and hands the network back (node_sleeps). A Dekker pattern with
// wake_if_parked(): the I/O thread says it is parked, then looks at `polling` again; a thread
// going to sleep has left `polling` first, then looks whether the I/O thread is parked.
#pragma once
#include <atomic>
#include <cstdint>

#include "common/futex.hpp"

namespace squall {

class io_parking {
 public:
  // Parks while `polling` is non-zero (at most `timeout_ns`, which bounds a missed hand-over);
  // false when nobody polls and the I/O thread should watch the network itself.
  bool park_while_polled(const std::atomic<std::uint32_t>& polling, const std::atomic<bool>& stopping,
                         std::int64_t timeout_ns) {
    if (polling.load(std::memory_order_seq_cst) == 0) return false;
    const std::uint32_t seen = bell_.load(std::memory_order_seq_cst);
    parked_.store(true, std::memory_order_seq_cst);
    if (polling.load(std::memory_order_seq_cst) != 0 && !stopping.load()) futex_wait(&bell_, seen, timeout_ns);
    parked_.store(false, std::memory_order_relaxed);
    return true;
  }
  bool parked() const { return parked_.load(std::memory_order_seq_cst); }
  // A thread of the node goes to sleep: the I/O thread must watch now.
  void wake_if_parked() {
    if (parked()) wake();
  }
  void wake() {  // also to stop it
    bell_.fetch_add(1, std::memory_order_seq_cst);
    futex_wake_all(&bell_);
  }

 private:
  std::atomic<std::uint32_t> bell_{0};
  std::atomic<bool> parked_{false};
};

}  // namespace squall
