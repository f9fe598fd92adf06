// The node lock: held while handlers run and while the send side is touched, which is
// what makes a node's handlers atomic with respect to each other. Re-entrant, so a
// handler may send.
//
// A test-and-test-and-set spin lock rather than std::mutex: it is taken on every send and
// every poll, critical sections are short, and unlocking is a plain store (std::mutex
// pays a second atomic read-modify-write). A waiter yields its core after a while, which
// matters when nodes outnumber cores.
//
// The owner is recorded as the kernel's thread id, so that the fault path can tell whether
// the faulting thread holds the lock (see memory/fault_service.cpp).
#pragma once
#include <sched.h>
#include <unistd.h>

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
  // Whether the thread with kernel id `tid` holds the lock (exact when that thread is the
  // caller, or is stopped in a fault and so cannot take or release it meanwhile).
  bool held_by(int tid) const { return owner_.load(std::memory_order_relaxed) == tid; }
  bool held_by_this_thread() const { return held_by(self()); }
  static int self() {
    // Zero-initialised, so reading it needs no guard: a dynamically initialised
    // thread_local costs a call on every access, and this is on every send.
    thread_local int id = 0;
    if (id == 0) [[unlikely]] id = static_cast<int>(::gettid());
    return id;
  }

  void unlock() {
    if (--depth_ == 0) {
      owner_.store(0, std::memory_order_relaxed);
      held_.store(false, std::memory_order_release);
    }
  }
  // Lets go of every level this thread holds and returns how many (0: it held none), so
  // that a wait can sleep without the lock; restore(levels) takes it back as it was.
  int release_all() {
    if (!held_by_this_thread()) return 0;
    const int levels = depth_;
    depth_ = 1;
    unlock();
    return levels;
  }
  void restore(int levels) {
    if (levels == 0) return;
    lock();
    depth_ = levels;
  }

 private:
  bool try_acquire() { return !held_.exchange(true, std::memory_order_acquire); }
  std::atomic<bool> held_{false};
  std::atomic<int> owner_{0};
  int depth_ = 0;
};

}  // namespace squall::rt
