// SPDX-License-Identifier: BSD-3-Clause
#include "common/poke.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "common/futex.hpp"  // now_ns: clock_gettime, async-signal-safe
#include "common/yield_backoff.hpp"

namespace squall::poke {
namespace {

constexpr int poke_signal = SIGURG;
struct sigaction previous_action;
std::atomic<std::uint64_t>* taken_count = nullptr;
std::atomic<std::uint64_t>* unyielded_count = nullptr;
std::atomic<std::int64_t>* unyielded_until = nullptr;

// Pokes yield only while their yields go to this node's progress thread. Beside another
// program's busy threads a poke's yield gave one of them the processor for its slice and put
// this program behind it: tsm_test on 2 nodes beside four busy loops took 18.1 s with pokes,
// 9.2 s without (medians of 5 alternated runs). So a yield that took a slice starts a
// period in which pokes do not yield. Only this handler touches it, on the main thread.
yield_backoff backoff;

void on_poke(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  if (taken_count != nullptr) taken_count->fetch_add(1, std::memory_order_relaxed);
  if (const std::int64_t now = now_ns(); backoff.may_yield(now)) {
    sched_yield();
    if (const std::int64_t back = now_ns(); back - now > yield_backoff::long_yield_ns) {
      backoff.start(back);
      if (unyielded_until != nullptr) unyielded_until->store(backoff.until, std::memory_order_relaxed);
    }
  } else if (unyielded_count != nullptr) {
    unyielded_count->fetch_add(1, std::memory_order_relaxed);
  }
  if ((previous_action.sa_flags & SA_SIGINFO) != 0) {
    previous_action.sa_sigaction(sig, info, context);
  } else if (previous_action.sa_handler != SIG_DFL && previous_action.sa_handler != SIG_IGN) {
    previous_action.sa_handler(sig);
  }
  errno = saved_errno;
}

}  // namespace

void install(std::atomic<std::uint64_t>* taken, std::atomic<std::uint64_t>* unyielded,
             std::atomic<std::int64_t>* until) {
  static std::once_flag once;
  std::call_once(once, [taken, unyielded, until] {
    taken_count = taken;
    unyielded_count = unyielded;
    unyielded_until = until;
    struct sigaction action {};
    action.sa_sigaction = on_poke;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(poke_signal, &action, &previous_action);
  });
}

bool running(pid_t tid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(tid));
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[512];
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (n <= 0) return false;
  text[n] = '\0';
  // "pid (comm) S ...": the state follows the last ')' (a command may contain one).
  const char* end_of_name = std::strrchr(text, ')');
  return end_of_name != nullptr && end_of_name[1] == ' ' && end_of_name[2] == 'R';
}

void send(pid_t pid) { ::syscall(SYS_tgkill, pid, pid, poke_signal); }

}  // namespace squall::poke
