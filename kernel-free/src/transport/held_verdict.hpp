// SPDX-License-Identifier: BSD-3-Clause
// A failed link's verdict, held a moment for a better one. When a peer's process ends, its
// kernel closes its links (a TCP connection closed or reset, a UCX endpoint failed), and the
// survivors across the network saw only that: "its TCP connection from ... failed: Connection
// reset by peer". The nodes that share the lost node's host hear from their launcher how it
// ended and, ending, say so in their ending frames (endings.hpp: "was killed by signal 9"),
// which end the job at once when they come. The link's own verdict is held for them, but only
// while one of them may still speak: a node alone on its host, or the last of a host whose
// every node's link has ended (a whole host lost), has no one to say more, and its link's
// verdict is reported at once. The transport's I/O thread reports it once due.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/futex.hpp"
#include "transport/endings.hpp"

namespace squall {

class held_verdict {
 public:
  static constexpr std::int64_t default_hold_ns = 1'000'000'000;

  // host_of: by node, a number for its host (equal numbers, one host; network_hooks::host_of).
  // Nodes without a link to this one (itself, and on its host the nodes reached through
  // shared memory) count as able to speak: their launcher sees how a host-mate ended.
  explicit held_verdict(std::vector<int> host_of, std::int64_t hold_ns = default_hold_ns)
      : host_of_(std::move(host_of)), link_ended_(host_of_.size(), false), hold_ns_(hold_ns) {}

  // `node`'s link ended without a verdict to give (it said goodbye, or this node is leaving):
  // it can no longer speak for a host-mate.
  void ended(int node) {
    std::lock_guard g(mu_);
    mark_ended(node);
    due_now_if_no_one_may_speak();
  }

  // `node`'s link failed: holds the verdict that it was lost, unless a failure's verdict is
  // held already (the first is the one that counts; the others follow from it).
  void failed(int node, std::string why) {
    std::lock_guard g(mu_);
    mark_ended(node);
    if (node_ < 0) {
      node_ = node;
      why_ = std::move(why);
      due_ns_.store(now_ns() + hold_ns_, std::memory_order_release);
    }
    due_now_if_no_one_may_speak();
  }

  // Reports the held verdict through `lost` once it is due (the I/O thread, each turn).
  void report_if_due(const lost_fn& lost) {
    const std::int64_t due = due_ns_.load(std::memory_order_acquire);
    if (due == 0 || now_ns() < due) return;
    int node;
    std::string why;
    {
      std::lock_guard g(mu_);
      if (reported_) return;
      reported_ = true;
      due_ns_.store(0);
      node = node_;
      why = why_;
    }
    lost(node, why, 0);
  }

  // Whether a verdict is held and not yet reported (for tests).
  bool holding() const {
    std::lock_guard g(mu_);
    return node_ >= 0 && !reported_;
  }

 private:
  void mark_ended(int node) {
    if (node >= 0 && static_cast<std::size_t>(node) < link_ended_.size()) link_ended_[static_cast<std::size_t>(node)] = true;
  }

  // The held verdict is due at once when no host-mate of its node is left to better it.
  void due_now_if_no_one_may_speak() {
    if (node_ >= 0 && !reported_ && !anyone_may_speak_for(node_)) due_ns_.store(now_ns(), std::memory_order_release);
  }

  // Whether a node of `node`'s host other than it may still say how it ended.
  bool anyone_may_speak_for(int node) const {
    if (node < 0 || static_cast<std::size_t>(node) >= host_of_.size()) return true;  // unknown: hold
    const int host = host_of_[static_cast<std::size_t>(node)];
    for (std::size_t k = 0; k < host_of_.size(); ++k) {
      if (static_cast<int>(k) != node && host_of_[k] == host && !link_ended_[k]) return true;
    }
    return false;
  }

  mutable std::mutex mu_;
  const std::vector<int> host_of_;
  std::vector<bool> link_ended_;  // by node
  const std::int64_t hold_ns_;
  int node_ = -1;  // the first node whose link failed
  std::string why_;
  bool reported_ = false;
  std::atomic<std::int64_t> due_ns_{0};  // 0: nothing held, or already reported
};

}  // namespace squall
