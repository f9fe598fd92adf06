// SPDX-License-Identifier: BSD-3-Clause
// Futex wait and wake on a 32-bit word, which may live in memory shared between processes.
#pragma once
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace squall {

// Sleeps while *word == expected, at most timeout_ns. Returns on wake, timeout or signal.
inline void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected,
                       std::int64_t timeout_ns) {
  timespec ts{static_cast<time_t>(timeout_ns / 1000000000), static_cast<long>(timeout_ns % 1000000000)};
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

inline void futex_wake_all(std::atomic<std::uint32_t>* word) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE, INT32_MAX, nullptr,
            nullptr, 0);
}

// The same with a class of sleeper: futex_wake_all wakes every class, futex_wake_class only
// the sleepers whose class shares a bit with `classes`.
inline void futex_wait_class(std::atomic<std::uint32_t>* word, std::uint32_t expected, std::int64_t timeout_ns,
                             std::uint32_t sleeper_class) {
  // FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline.
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const std::int64_t at = static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec + timeout_ns;
  ts = {static_cast<time_t>(at / 1000000000), static_cast<long>(at % 1000000000)};
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT_BITSET, expected, &ts, nullptr,
            sleeper_class);
}

inline void futex_wake_class(std::atomic<std::uint32_t>* word, std::uint32_t classes) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE_BITSET, INT32_MAX, nullptr, nullptr,
            classes);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

inline std::int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace squall
