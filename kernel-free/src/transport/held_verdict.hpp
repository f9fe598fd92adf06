// SPDX-License-Identifier: BSD-3-Clause
// A failed link's verdict, held a moment for a better one. When a peer's process ends, its
// kernel closes its links (a TCP connection closed or reset, a UCX endpoint failed), and the
// survivors across the network saw only that: "its TCP connection from ... failed: Connection
// reset by peer". The nodes that share the lost node's host hear from their launcher how it
// ended and, ending, say so in their ending frames (endings.hpp: "was killed by signal 9"),
// which end the job at once when they come. The link's own verdict is reported only if none
// came within the hold: a node alone on its host, or a whole host lost, has no one to say more,
// and is then reported `hold_ns` late. The transport's I/O thread reports it once due.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>

#include "common/futex.hpp"
#include "transport/endings.hpp"

namespace squall {

class held_verdict {
 public:
  static constexpr std::int64_t hold_ns = 1'000'000'000;

  // Holds the verdict that `node`'s link failed, unless a failure's verdict is held already
  // (the first is the one that counts; the others follow from it).
  void hold(int node, std::string why) {
    std::lock_guard g(mu_);
    if (node_ >= 0) return;
    node_ = node;
    why_ = std::move(why);
    due_ns_.store(now_ns() + hold_ns, std::memory_order_release);
  }

  // Reports the held verdict through `lost` once it is due (the I/O thread, each turn).
  void report_if_due(const lost_fn& lost) {
    const std::int64_t due = due_ns_.load(std::memory_order_acquire);
    if (due == 0 || now_ns() < due) return;
    due_ns_.store(0);
    int node;
    std::string why;
    {
      std::lock_guard g(mu_);
      node = node_;
      why = why_;
    }
    lost(node, why, 0);
  }

 private:
  std::mutex mu_;
  int node_ = -1;
  std::string why_;
  std::atomic<std::int64_t> due_ns_{0};  // 0: nothing held, or already reported
};

}  // namespace squall
