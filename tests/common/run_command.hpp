// For tests that drive squallrun from outside: run a shell command with a hard time limit
// and read what it printed.
#pragma once
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <string>

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

}  // namespace squall::test
