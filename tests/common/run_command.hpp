// SPDX-License-Identifier: BSD-3-Clause
// For tests that drive squallrun from outside: run a shell command with a hard time limit
// and read what it printed.
#pragma once
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace squall::test {

struct outcome {
  int status = -1;  // exit status, or -1 if killed by a signal
  std::string output;
  double seconds = 0;
};

// Runs `command` (it may begin with VAR=value assignments) with a hard time limit,
// capturing stdout and stderr together.
inline outcome run(const std::string& command, int limit_s = 60) {
  outcome o;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string full = "timeout -s KILL " + std::to_string(limit_s) + " env " + command + " 2>&1";
  FILE* p = popen(full.c_str(), "r");
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) o.output.append(buf, n);
  const int st = pclose(p);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
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
  // Waits for the command to end (killing its process group after `limit_s` seconds);
  // `seconds` is measured from `since`.
  outcome finish(int limit_s, std::chrono::steady_clock::time_point since) {
    outcome o;
    const auto until = started_ + std::chrono::seconds(limit_s);
    int st = 0;
    while (waitpid(pid_, &st, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() >= until) {
        kill(-pid_, SIGKILL);
        waitpid(pid_, &st, 0);
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
