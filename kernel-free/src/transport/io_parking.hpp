// SPDX-License-Identifier: BSD-3-Clause
// Where a network transport's I/O thread waits while a thread of its node polls the network
// itself (any_incoming): parked on a futex word, out of the poller's way, until a thread of
// the node goes to sleep and hands the network back (node_sleeps). A Dekker pattern with
// wake_if_parked(): the I/O thread says it is parked, then looks at `polling` again; a thread
// going to sleep has left `polling` first, then looks whether the I/O thread is parked.
//
// Unparked, the I/O thread watches the wire (epoll_wait on a set that holds kick_fd()). A
// thread that starts polling kicks it out (node_polls), and it parks again: left there, it was
// woken by every packet the poller then read, mostly for nothing (the poller had read it
// first), 4,000 times a second on the poller's processor in a ping-pong. The same Dekker
// pattern: the watcher says it watches, then looks at `polling`; a poller has raised
// `polling`, then looks whether it watches.
#pragma once
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "common/futex.hpp"
#include "common/log.hpp"

namespace squall {

class io_parking {
 public:
  io_parking() : kick_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (kick_fd_ < 0) fatal("cannot create an I/O thread's eventfd: %s", std::strerror(errno));
  }
  ~io_parking() { ::close(kick_fd_); }
  io_parking(const io_parking&) = delete;
  io_parking& operator=(const io_parking&) = delete;

  // Around the I/O thread's epoll_wait: false when a thread polls (then it must not wait).
  bool begin_watch(const std::atomic<std::uint32_t>& polling) {
    watching_.store(true, std::memory_order_seq_cst);
    if (polling.load(std::memory_order_seq_cst) == 0) return true;
    watching_.store(false, std::memory_order_relaxed);
    return false;
  }
  void end_watch() { watching_.store(false, std::memory_order_seq_cst); }
  // Kicks the I/O thread out of epoll_wait if it watches; false if it does not.
  bool kick() {
    if (!watching_.load(std::memory_order_seq_cst)) return false;
    const std::uint64_t one = 1;
    [[maybe_unused]] auto r = ::write(kick_fd_, &one, sizeof one);
    return true;
  }
  int kick_fd() const { return kick_fd_; }
  void drain_kick() {
    std::uint64_t drained;
    [[maybe_unused]] auto r = ::read(kick_fd_, &drained, sizeof drained);
  }

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
  const int kick_fd_;
  std::atomic<bool> watching_{false};
  std::atomic<std::uint32_t> bell_{0};
  std::atomic<bool> parked_{false};
};

}  // namespace squall
