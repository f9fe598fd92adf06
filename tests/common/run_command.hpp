// SPDX-License-Identifier: BSD-3-Clause
// For tests that drive squallrun from outside: run a shell command under a watchdog (hang.hpp)
// and read what it printed.
#pragma once
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "hang.hpp"

namespace squall::test {

struct outcome {
  int status = -1;  // exit status, or -1 if killed by a signal
  std::string output;
  double seconds = 0;  // for the test's log only: no test asserts a time
  bool hung = false;   // still running at its limit: the watchdog killed it
  int limit_s = 0;     // that limit
};

// For a failure message: whether the watchdog ended the command, then what it printed.
inline std::string report(const outcome& o) {
  return (o.hung ? "hung: still running after " + std::to_string(o.limit_s) + " s, killed by the test's watchdog\n"
                 : std::string()) +
         o.output;
}

// Runs `command` (it may begin with VAR=value assignments) in a process group of its own,
// capturing stdout and stderr together until it has ended and every process it left has
// closed them. At `limit_s` the watchdog kills the group and marks the outcome hung.
inline outcome run(const std::string& command, int limit_s = hang_s) {
  using clock = std::chrono::steady_clock;
  outcome o;
  o.limit_s = limit_s;
  const auto t0 = clock::now();
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    o.output = "run: pipe2 failed";
    return o;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    dup2(pipe_fds[1], STDOUT_FILENO);
    dup2(pipe_fds[1], STDERR_FILENO);
    execl("/bin/sh", "sh", "-c", ("exec env " + command).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(pipe_fds[1]);
  setpgid(pid, pid);  // here too, so that the watchdog's kill finds the group whoever runs first
  const auto deadline = t0 + std::chrono::seconds(limit_s);
  // After the kill, a process that left the group may still hold the pipe: read it a while.
  const auto given_up = deadline + std::chrono::seconds(10);
  bool open = true, reaped = false;
  int st = 0;
  while ((open || !reaped) && clock::now() < given_up) {
    if (!o.hung && clock::now() >= deadline) {
      o.hung = true;
      kill(-pid, SIGKILL);
    }
    if (!reaped && waitpid(pid, &st, WNOHANG) == pid) reaped = true;
    if (!open) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    pollfd p{pipe_fds[0], POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(pipe_fds[0], buf, sizeof buf);
    if (n > 0) {
      o.output.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      open = false;
    }
  }
  close(pipe_fds[0]);
  if (!reaped) {
    kill(-pid, SIGKILL);
    waitpid(pid, &st, 0);
  }
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  o.seconds = std::chrono::duration<double>(clock::now() - t0).count();
  return o;
}

inline int count_of(const std::string& text, const std::string& what) {
  int c = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++c;
  return c;
}

// A command running beside the test (in its own process group), its output going to a
// file, so that the test can act on the job while it runs and then collect each part.
class background {
 public:
  explicit background(const std::string& command) {
    char path[] = "/tmp/squall-test-XXXXXX";
    const int fd = mkstemp(path);
    output_path_ = path;
    started_ = std::chrono::steady_clock::now();
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      execl("/bin/sh", "sh", "-c", ("exec env " + command).c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fd);
  }
  background(const background&) = delete;
  background& operator=(const background&) = delete;
  ~background() {
    if (pid_ > 0) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    std::remove(output_path_.c_str());
  }

  std::string output() const {
    std::ifstream in(output_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Polls the output for `what` up to `limit_s` seconds.
  bool wait_for_output(const std::string& what, int times, int limit_s) const {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(limit_s);
    while (std::chrono::steady_clock::now() < until) {
      if (count_of(output(), what) >= times) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  // Waits for the command to end, `limit_s` seconds after it started at most: then the
  // watchdog kills its process group and marks the outcome hung. `seconds` is measured from
  // `since`.
  outcome finish(int limit_s, std::chrono::steady_clock::time_point since) {
    outcome o;
    o.limit_s = limit_s;
    const auto until = started_ + std::chrono::seconds(limit_s);
    int st = 0;
    while (waitpid(pid_, &st, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() >= until) {
        kill(-pid_, SIGKILL);
        waitpid(pid_, &st, 0);
        o.hung = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    pid_ = -1;
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
    o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    o.output = output();
    return o;
  }
  outcome finish(int limit_s) { return finish(limit_s, started_); }
  pid_t pid() const { return pid_; }  // the command's process (sh execs it)
  int seconds_so_far() const {
    return static_cast<int>(std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count());
  }

 private:
  pid_t pid_ = -1;
  std::string output_path_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace squall::test
