// SPDX-License-Identifier: BSD-3-Clause
// What a test calls a hang. A test checks behaviour and counts, never how long something
// took: a bound on a job's time fails on a loaded machine, not when the behaviour breaks. A
// test that must end (a lost node reported, misuse refused) checks what ended it, and gives
// it until hang_s; past that it calls it hung, ends it and fails saying so.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace squall::test {

// Both set in tests/CMakeLists.txt, which gives CTest's deadlines the same values.
#if !defined(SQUALL_TEST_HANG_S) || !defined(SQUALL_TEST_SLOW_ENDING_S)
#error "tests/CMakeLists.txt defines SQUALL_TEST_HANG_S and SQUALL_TEST_SLOW_ENDING_S"
#endif
// Generous: a sanitized build on a loaded 2-core machine starts and ends a job many times
// slower than a release build on an idle one (the lost-node time bounds the tests had were
// 10 s, and 60 s under the sanitizers).
inline constexpr int hang_s = SQUALL_TEST_HANG_S;

// Squall's slow ways of ending a job, set far past hang_s, for a test that checks that a fast
// one ended it (a lost node seen at once): the silence limit (SQUALL_LIVENESS_S) and the TCP
// set-up's timeout (SQUALL_TCP_TIMEOUT). Neither can then end the job first; a job only they
// would have ended shows as hung.
inline constexpr int slow_ending_s = SQUALL_TEST_SLOW_ENDING_S;
static_assert(slow_ending_s > 2 * hang_s);
inline const std::string slow_endings_off =
    "SQUALL_LIVENESS_S=" + std::to_string(slow_ending_s) + " SQUALL_TCP_TIMEOUT=" + std::to_string(slow_ending_s) + " ";

// How many times `output` says that one of those slow endings ended a wait: a node silent
// for SQUALL_LIVENESS_S, or a set-up past SQUALL_TCP_TIMEOUT.
inline int slow_endings_in(const std::string& output) {
  int c = 0;
  for (const char* what : {"(stopped? SQUALL_LIVENESS_S)", "SQUALL_TCP_TIMEOUT)"}) {
    for (auto p = output.find(what); p != std::string::npos; p = output.find(what, p + 1)) ++c;
  }
  return c;
}

// Inside a test program: a step that must return (or throw) rather than wait for ever. If it
// has not within hang_s, the watchdog says so, naming it, and aborts the process (the job's
// other nodes then see it lost), so that a hang fails with its name rather than at CTest's
// timeout.
class hang_watchdog {
 public:
  explicit hang_watchdog(std::string what) : what_(std::move(what)) {
    thread_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!done_cv_.wait_for(lock, std::chrono::seconds(hang_s), [this] { return done_; })) {
        std::fprintf(stderr, "hung: %s had not returned after %d s; aborting\n", what_.c_str(), hang_s);
        std::fflush(stderr);
        std::abort();
      }
    });
  }
  hang_watchdog(const hang_watchdog&) = delete;
  hang_watchdog& operator=(const hang_watchdog&) = delete;
  ~hang_watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_one();
    thread_.join();
  }

 private:
  std::string what_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace squall::test
