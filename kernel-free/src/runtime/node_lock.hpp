// The node lock: held while handlers run and while the send side is touched, which is
// what makes a node's handlers atomic with respect to each other. Re-entrant, so a
// handler may send.
//
// A test-and-test-and-set spin lock rather than std::mutex: it is taken on every send and
// every poll, critical sections are short, and unlocking is a plain store (std::mutex
// pays a second atomic read-modify-write). A waiter yields its core after a while, which
// matters when nodes outnumber cores.
#pragma once
#include <sched.h>

#include <atomic>

#include "common/futex.hpp"

namespace squall::rt {

class node_lock {
 public:
  void lock() {
    if (owner_.load(std::memory_order_relaxed) == self()) {
      ++depth_;
      return;
    }
    for (unsigned spins = 0; !try_acquire(); ++spins) {
      while (held_.load(std::memory_order_relaxed)) {
        if ((++spins & 255) == 0) {
          sched_yield();
        } else {
          cpu_relax();
        }
      }
    }
    owner_.store(self(), std::memory_order_relaxed);
    depth_ = 1;
  }
  bool try_lock() {
    if (owner_.load(std::memory_order_relaxed) == self()) {
      ++depth_;
      return true;
    }
    if (held_.load(std::memory_order_relaxed) || !try_acquire()) return false;
    owner_.store(self(), std::memory_order_relaxed);
    depth_ = 1;
    return true;
  }
  void unlock() {
    if (--depth_ == 0) {
      owner_.store(0, std::memory_order_relaxed);
      held_.store(false, std::memory_order_release);
    }
  }

 private:
  bool try_acquire() { return !held_.exchange(true, std::memory_order_acquire); }
  static int self() {
    static std::atomic<int> next{1};
    thread_local const int id = next.fetch_add(1);
    return id;
  }
  std::atomic<bool> held_{false};
  std::atomic<int> owner_{0};
  int depth_ = 0;
};

}  // namespace squall::rt
