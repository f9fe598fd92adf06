// SPDX-License-Identifier: BSD-3-Clause
#include "escapees.hpp"

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "processes.hpp"

namespace squallrun {

namespace {

// Whether the process behind `pidfd` has ended: its pidfd is then readable.
bool ended(int pidfd) {
  pollfd fd{pidfd, POLLIN, 0};
  return poll(&fd, 1, 0) != 0;
}

// The children of every thread of `pid`: a child is listed under the thread that started it.
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> found;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = opendir(tasks.c_str());
  if (dir == nullptr) return found;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream list(tasks + "/" + e->d_name + "/children");
    for (pid_t child = 0; list >> child;) found.push_back(child);
  }
  closedir(dir);
  return found;
}

void send(int pidfd, int sig) { syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0); }

}  // namespace

int open_pidfd(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

escapees::~escapees() {
  for (const held& h : held_) close(h.process.pidfd);
}

bool escapees::holds(pid_t pid) const {
  return std::any_of(held_.begin(), held_.end(), [pid](const held& h) { return h.process.pid == pid; });
}

void escapees::find(const std::vector<job_process>& roots) {
  running();
  std::vector<pid_t> walked;
  for (const job_process& root : roots) walk(root, walked);
  // Those whose parent ended once squallrun had: passed to init, below no root.
  for (std::size_t i = 0; i < held_.size(); ++i) walk(held_[i].process, walked);
}

// By value: `parent` may be in held_, which grows meanwhile.
void escapees::walk(job_process parent, std::vector<pid_t>& walked) {
  if (std::find(walked.begin(), walked.end(), parent.pid) != walked.end()) return;
  walked.push_back(parent.pid);
  for (const pid_t pid : children_of(parent.pid)) {
    if (pid == keeper_) continue;
    const job_process child{pid, open_pidfd(pid)};
    if (child.pidfd < 0) continue;
    // Still `parent`'s child once its pidfd is open, and `parent` still alive after: the
    // pidfd is of a process of the job, not of one that took a pid that ended meanwhile.
    const auto p = process_of(pid);
    const bool of_job = p && p->parent == parent.pid && p->state != 'Z' && !ended(parent.pidfd);
    if (of_job && p->group != group_ && !holds(pid)) {
      held_.push_back({child});
      walk(child, walked);
      continue;  // its pidfd kept
    }
    if (of_job) walk(child, walked);
    close(child.pidfd);
  }
}

std::size_t escapees::running() {
  std::erase_if(held_, [](const held& h) {
    if (!ended(h.process.pidfd)) return false;
    close(h.process.pidfd);
    return true;
  });
  return held_.size();
}

void escapees::terminate() {
  for (held& h : held_) {
    if (h.terminated) continue;
    send(h.process.pidfd, SIGTERM);
    send(h.process.pidfd, SIGCONT);
    h.terminated = true;
  }
}

void escapees::kill() {
  for (const held& h : held_) send(h.process.pidfd, SIGKILL);
}

}  // namespace squallrun
