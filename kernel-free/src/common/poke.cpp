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

namespace squall::poke {
namespace {

constexpr int poke_signal = SIGURG;
struct sigaction previous_action;
std::atomic<std::uint64_t>* taken_count = nullptr;

void on_poke(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  if (taken_count != nullptr) taken_count->fetch_add(1, std::memory_order_relaxed);
  sched_yield();
  if ((previous_action.sa_flags & SA_SIGINFO) != 0) {
    previous_action.sa_sigaction(sig, info, context);
  } else if (previous_action.sa_handler != SIG_DFL && previous_action.sa_handler != SIG_IGN) {
    previous_action.sa_handler(sig);
  }
  errno = saved_errno;
}

}  // namespace

void install(std::atomic<std::uint64_t>* taken) {
  static std::once_flag once;
  std::call_once(once, [taken] {
    taken_count = taken;
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
