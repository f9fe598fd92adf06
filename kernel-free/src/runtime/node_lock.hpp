// The node lock: held while handlers run and while the send side is touched, which is
// what makes a node's handlers atomic with respect to each other. Re-entrant, so a
// handler may send.
#pragma once
#include <atomic>
#include <mutex>

namespace squall::rt {

class node_lock {
 public:
  void lock() {
    if (owner_.load(std::memory_order_relaxed) == self()) {
      ++depth_;
      return;
    }
    mutex_.lock();
    owner_.store(self(), std::memory_order_relaxed);
    depth_ = 1;
  }
  bool try_lock() {
    if (owner_.load(std::memory_order_relaxed) == self()) {
      ++depth_;
      return true;
    }
    if (!mutex_.try_lock()) return false;
    owner_.store(self(), std::memory_order_relaxed);
    depth_ = 1;
    return true;
  }
  void unlock() {
    if (--depth_ == 0) {
      owner_.store(0, std::memory_order_relaxed);
      mutex_.unlock();
    }
  }

 private:
  static int self() {
    static std::atomic<int> next{1};
    thread_local const int id = next.fetch_add(1);
    return id;
  }
  std::mutex mutex_;
  std::atomic<int> owner_{0};
  int depth_ = 0;
};

}  // namespace squall::rt
