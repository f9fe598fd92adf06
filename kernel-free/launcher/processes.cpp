// SPDX-License-Identifier: BSD-3-Clause
#include "processes.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <utility>

namespace squallrun {

namespace {

// squallrun's children still to be reaped, but the keeper. The launcher is a child subreaper
// (main), so once the nodes have ended these are what they left: processes that a node
// started and that outlived it (a wrapper script's command, a helper, a daemon).
std::vector<pid_t> my_children(pid_t keeper) {
  std::vector<pid_t> found;
  const pid_t self = getpid();
  for (const process& p : all_processes()) {
    if (p.parent == self && p.pid != keeper) found.push_back(p.pid);
  }
  return found;
}

// Every process below squallrun but the keeper: the nodes, what they started, and what
// those left to squallrun (the subreaper) when their parent ended.
std::vector<process> job_processes(pid_t keeper) {
  const auto all = all_processes();
  std::vector<pid_t> parents{getpid()};
  std::vector<process> found;
  for (std::size_t i = 0; i < parents.size(); ++i) {
    for (const process& p : all) {
      if (p.parent != parents[i] || p.pid == keeper) continue;
      found.push_back(p);
      parents.push_back(p.pid);
    }
  }
  return found;
}

void reap_ended_children() {
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

void signal_all(const std::vector<pid_t>& pids, int sig) {
  for (pid_t p : pids) kill(p, sig);
}

// What of `left` still runs at `until`: each round sends `sig` (0: none) to what is left,
// waits `period` and reaps what ended.
std::vector<pid_t> left_running_at(pid_t keeper, std::vector<pid_t> left, std::chrono::steady_clock::time_point until,
                                   int sig, std::chrono::milliseconds period) {
  while (!left.empty() && std::chrono::steady_clock::now() < until) {
    if (sig != 0) signal_all(left, sig);
    std::this_thread::sleep_for(period);
    reap_ended_children();
    left = my_children(keeper);
  }
  return left;
}

}  // namespace

// Process `pid` as /proc/PID/stat shows it ("pid (comm) state ppid pgrp ..."), or nothing.
std::optional<process> process_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return std::nullopt;
  const auto paren = text.rfind(')');  // comm may hold spaces and parentheses
  if (paren == std::string::npos || paren + 4 > text.size()) return std::nullopt;
  char* rest = nullptr;
  const auto parent = static_cast<pid_t>(std::strtol(text.c_str() + paren + 4, &rest, 10));
  return process{pid, parent, static_cast<pid_t>(std::strtol(rest, nullptr, 10)), text[paren + 2]};
}

std::vector<process> all_processes() {
  std::vector<process> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (const dirent* e = readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    if (const auto p = process_of(pid)) found.push_back(*p);
  }
  closedir(proc);
  return found;
}

void signal_job(pid_t keeper, int sig, pid_t skip, pid_t skip_too) {
  for (const process& p : job_processes(keeper)) {
    if (p.group != skip && p.group != skip_too) kill(p.pid, sig);
  }
}

void end_leftovers(pid_t keeper, std::int64_t grace_s) {
  reap_ended_children();
  auto left = my_children(keeper);
  // A process that outlives its node by moments is ending by itself, not left behind: clang's
  // ASan starts llvm-symbolizer to match a leak against its suppressions, and the symbolizer
  // ends when the node that reads it has ended (it outlived a UCX job's nodes in 4 of 6 runs
  // and was named here, after the program's last line). Only what still runs after this
  // moment is stopped and counted.
  using std::chrono::milliseconds;
  left = left_running_at(keeper, std::move(left), std::chrono::steady_clock::now() + milliseconds(250), 0,
                         milliseconds(5));
  if (left.empty()) return;
  std::fprintf(stderr, "squallrun: the nodes left %zu process(es) running; stopping them\n", left.size());
  // SIGTERM each round: again for any passed on since the last one.
  left = left_running_at(keeper, std::move(left), std::chrono::steady_clock::now() + std::chrono::seconds(grace_s),
                         SIGTERM, milliseconds(50));
  while (!left.empty()) {
    signal_all(left, SIGKILL);
    waitpid(-1, nullptr, 0);
    reap_ended_children();
    left = my_children(keeper);
  }
}

}  // namespace squallrun
