// SPDX-License-Identifier: BSD-3-Clause
// The node lock: held while handlers run and while the send side is touched, which is
// what makes a node's handlers atomic with respect to each other. Re-entrant, so a
// handler may send.
//
// A test-and-test-and-set spin lock rather than std::mutex: it is taken on every send and
// every poll, critical sections are short, and unlocking is a plain store (std::mutex
// pays a second atomic read-modify-write). A waiter yields its core after a while, which
// matters when nodes outnumber cores.
//
// Biased to one thread (the runtime's own, which does nearly all the sending and waiting):
// that thread enters with plain stores and loads, no locked instruction. A locked
// instruction waits for the core's earlier stores, and on the message path those are a
// packet's stores to a line the other node is reading: four of them cost a small request/
// reply round trip 30% (kernel-free/TRANSPORTS.md). The rare other taker (the progress
// thread, another thread, a fault on another thread) takes the lock word as usual, then
// revokes the bias with an asymmetric Dekker handshake: it raises `revoke_` and runs
// membarrier(2) (every running thread of the process executes a full barrier), then waits
// until the biased thread is out. The biased thread announces itself in `in_cs_` and then
// looks at `revoke_`, with a compiler barrier between - the membarrier supplies the hardware
// one. `revoke_` stays raised until the biased thread itself takes the bias back, on a later
// acquisition through the lock word and at most once a millisecond after a revocation:
// that bounds what a workload whose progress thread often needs the lock pays in
// membarriers.
//
// The owner is recorded as the kernel's thread id, so that the fault path can tell whether
// the faulting thread holds the lock (see memory/fault_service.cpp).
#pragma once
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "common/futex.hpp"

namespace squall::rt {

class node_lock {
 public:
  void lock() {
    const int me = self();
    if (owner_.load(std::memory_order_relaxed) == me) {
      ++depth_;
      return;
    }
    if (bias_.load(std::memory_order_relaxed) == me && enter_biased(me)) return;
    lock_word();
    finish_acquire(me);
  }
  bool try_lock() {
    const int me = self();
    if (owner_.load(std::memory_order_relaxed) == me) {
      ++depth_;
      return true;
    }
    if (bias_.load(std::memory_order_relaxed) == me && enter_biased(me)) return true;
    if (held_.load(std::memory_order_relaxed) || !try_acquire()) return false;
    if (bias_.load(std::memory_order_relaxed) != 0 && bias_.load(std::memory_order_relaxed) != me &&
        !revoke_bias(/*wait=*/false)) {
      held_.store(false, std::memory_order_release);
      return false;
    }
    finish_acquire(me);
    return true;
  }
  // Whether the thread with kernel id `tid` holds the lock (exact when that thread is the
  // caller, or is stopped in a fault and so cannot take or release it meanwhile).
  bool held_by(int tid) const { return owner_.load(std::memory_order_relaxed) == tid; }
  bool held_by_this_thread() const { return held_by(self()); }
  bool held_once_by_this_thread() const { return held_by_this_thread() && depth_ == 1; }
  static int self() {
    // Zero-initialised, so reading it needs no guard: a dynamically initialised
    // thread_local costs a call on every access, and this is on every send.
    thread_local int id = 0;
    if (id == 0) [[unlikely]] id = static_cast<int>(::gettid());
    return id;
  }

  void unlock() {
    if (--depth_ != 0) return;
    owner_.store(0, std::memory_order_relaxed);
    if (biased_entry_) {
      biased_entry_ = false;
      in_cs_.store(false, std::memory_order_release);
    } else {
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

  // Makes the calling thread the one the lock is biased to, when the kernel offers a
  // private expedited membarrier. Call once, before other threads use the lock.
  bool bias_to_this_thread();
  // Revocations so far (a counter for tests and SQUALL_STATS).
  std::uint64_t revocations() const { return revocations_.load(std::memory_order_relaxed); }

 private:
  bool try_acquire() { return !held_.exchange(true, std::memory_order_acquire); }
  void lock_word() {
    for (unsigned spins = 0; !try_acquire(); ++spins) {
      while (held_.load(std::memory_order_relaxed)) {
        if ((++spins & 255) == 0) {
          sched_yield();
        } else {
          cpu_relax();
        }
      }
    }
  }
  // The biased thread's way in: true when it is in. False when the bias is being revoked
  // or is gone; the caller then takes the lock word.
  bool enter_biased(int me) {
    in_cs_.store(true, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);  // the revoker's membarrier does the rest
    if (revoke_.load(std::memory_order_relaxed)) [[unlikely]] {
      in_cs_.store(false, std::memory_order_release);
      return false;
    }
    std::atomic_signal_fence(std::memory_order_acquire);
    owner_.store(me, std::memory_order_relaxed);
    depth_ = 1;
    biased_entry_ = true;
    return true;
  }
  // With the lock word held: revokes another thread's bias, or (the biased thread itself,
  // back through the lock word) re-establishes its own.
  void finish_acquire(int me) {
    const int biased = bias_.load(std::memory_order_relaxed);
    if (biased != 0 && biased != me) revoke_bias(/*wait=*/true);
    if (candidate_ == me && (biased != me || revoke_.load(std::memory_order_relaxed))) rebias(me);
    owner_.store(me, std::memory_order_relaxed);
    depth_ = 1;
  }
  // With the lock word held. Returns false (the bias left in place, but `revoke_` raised:
  // the biased thread comes back through the lock word and takes it back) only when !wait
  // and the biased thread is inside.
  bool revoke_bias(bool wait);
  void rebias(int me);

  std::atomic<bool> held_{false};
  std::atomic<int> owner_{0};
  int depth_ = 0;
  bool biased_entry_ = false;  // the holder came in through the bias (owner's own state)
  // The bias: the thread it favours (0: none), that thread's "I am inside", and a revoker's
  // "stay out". Apart from the lock word, which other threads spin on.
  alignas(64) std::atomic<int> bias_{0};
  std::atomic<bool> in_cs_{false};
  std::atomic<bool> revoke_{false};
  int candidate_ = 0;                  // the thread bias_to_this_thread() named
  std::int64_t last_revocation_ns_ = 0;  // written with the lock word held
  std::atomic<std::uint64_t> revocations_{0};
};

}  // namespace squall::rt
