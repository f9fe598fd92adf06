// SPDX-License-Identifier: BSD-3-Clause
// The floor under a miss served by a computing node: how soon a thread reaches a processor
// on which another thread computes, outside the library. Two ways, each timed from this
// thread on another processor:
//   wake   a thread sleeping on a futex there is woken (what a doorbell or a nudge does: the
//          scheduler preempts the computing thread for it)
//   signal the computing thread itself is sent a signal (an interrupt, as Tempest's nodes
//          took one: its handler runs at once)
// Both need an inter-processor interrupt; under a hypervisor that is the cost.
#pragma once
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <thread>
#include <vector>

#include "common/report.hpp"

namespace squall::bench {

struct busy_floor {
  double wake_us = 0;    // median; 0 when there is no second processor
  double signal_us = 0;  // median
};

namespace detail {

inline std::int64_t floor_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline std::atomic<std::int64_t> floor_signalled{0};
inline void floor_on_signal(int) { floor_signalled.store(floor_now_ns()); }

inline void run_on(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// Times `trials` deliveries started by `start`, each waiting until `arrived` is set, a few
// hundred microseconds apart (so the woken side has gone back to its state).
template <class Start>
double median_delivery_us(int trials, std::atomic<std::int64_t>& arrived, Start&& start) {
  std::vector<double> us;
  for (int i = 0; i < trials; ++i) {
    arrived.store(0);
    const std::int64_t t0 = floor_now_ns();
    start();
    while (arrived.load() == 0 && floor_now_ns() - t0 < 100'000'000) {
    }
    if (arrived.load() != 0) us.push_back(static_cast<double>(arrived.load() - t0) / 1e3);
    std::this_thread::sleep_for(std::chrono::microseconds(300 + 100 * (i % 7)));
  }
  return median(us);
}

}  // namespace detail

// Measures both, the computing and the woken thread sharing one other processor. The caller
// keeps everything else off that processor meanwhile (the other nodes wait in a barrier).
inline busy_floor measure_busy_floor(int trials = 200) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const int here = sched_getcpu();
  if (cpus < 2 || here < 0) return {};
  const int there = static_cast<int>((here + 1) % cpus);
  std::atomic<bool> stop{false};
  std::atomic<std::uint32_t> bell{0};
  std::atomic<std::int64_t> woke{0};
  auto futex = [&](int op, std::uint32_t value) {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&bell), op, value, nullptr, nullptr, 0);
  };
  std::thread computing([&] {
    detail::run_on(there);
    volatile double x = 1.0;
    while (!stop.load(std::memory_order_relaxed)) x = x * 1.0000001 + 1e-9;
  });
  std::thread sleeper([&] {
    detail::run_on(there);
    std::uint32_t seen = 0;
    while (!stop.load()) {
      futex(FUTEX_WAIT_PRIVATE, seen);
      if (bell.load() != seen) {
        woke.store(detail::floor_now_ns());
        seen = bell.load();
      }
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // both placed
  busy_floor f;
  f.wake_us = detail::median_delivery_us(trials, woke, [&] {
    bell.fetch_add(1);
    futex(FUTEX_WAKE_PRIVATE, 1);
  });
  struct sigaction action {}, old {};
  action.sa_handler = detail::floor_on_signal;
  sigaction(SIGUSR2, &action, &old);
  f.signal_us = detail::median_delivery_us(trials, detail::floor_signalled,
                                           [&] { pthread_kill(computing.native_handle(), SIGUSR2); });
  stop.store(true);
  bell.fetch_add(1);
  futex(FUTEX_WAKE_PRIVATE, 1);
  computing.join();
  sleeper.join();
  sigaction(SIGUSR2, &old, nullptr);
  return f;
}

}  // namespace squall::bench
