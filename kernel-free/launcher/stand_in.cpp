// SPDX-License-Identifier: BSD-3-Clause
#include "stand_in.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <squall/runtime.hpp>

#include "common/config.hpp"
#include "common/futex.hpp"
#include "transport/shm/job_area.hpp"

namespace squallrun {

bool needs_stand_in(std::uint32_t state) {
  return state == squall::shm::not_started || state == squall::shm::joining;
}

bool is_stand_in() { return std::getenv("SQUALL_STAND_IN") != nullptr; }

void be_stand_in(int argc, char** argv) {
  // The job is aborted: the set-up ends this process (fatal) once the peers it can reach
  // have been told. Were it to return, the job would be waiting for a node that is not there.
  // Quiet: squallrun has said how the node ended, and the stand-in would say it was lost.
  const int null_fd = open("/dev/null", O_WRONLY);
  if (null_fd >= 0) {
    dup2(null_fd, STDOUT_FILENO);
    dup2(null_fd, STDERR_FILENO);
    close(null_fd);
  }
  squall::init(&argc, &argv);
  _exit(1);
}

void exec_stand_in() {
  setenv("SQUALL_STAND_IN", "1", 1);
  char name[] = "squallrun";
  char* argv[] = {name, nullptr};
  execv("/proc/self/exe", argv);
  std::fprintf(stderr, "squallrun: cannot run the stand-in of a lost node: %s\n", std::strerror(errno));
  _exit(127);
}

void wait_for_stand_in(pid_t stand_in) {
  const std::int64_t limit_s = squall::env_int("SQUALL_TCP_TIMEOUT", 30, 1, 3600) + 5;
  const std::int64_t until = squall::now_ns() + limit_s * 1'000'000'000;
  while (squall::now_ns() < until) {
    if (waitpid(stand_in, nullptr, WNOHANG) != 0) return;
    ::usleep(10'000);
  }
  kill(stand_in, SIGKILL);
  waitpid(stand_in, nullptr, 0);
}

}  // namespace squallrun
