// SPDX-License-Identifier: BSD-3-Clause
#include "keeper.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "escapees.hpp"
#include "processes.hpp"

namespace squallrun {

namespace {

// How often the keeper looks for the job's processes that left its process group, while
// squallrun runs: what escapes and is not seen before squallrun is killed outlives the job.
constexpr int look_every_ms = 250;

// The keeper's part: it waits for the end of its pipe, whose write end only squallrun holds
// (close-on-exec, so no node keeps it), which comes when squallrun ends, however it ends
// (SIGKILL included). By then the nodes are gone or going (PR_SET_PDEATHSIG), but not what
// they started, which a node's end passed to init (squallrun, their subreaper, is gone): all
// of it is in the job's process group, the keeper's, but what left that group itself
// (setsid, setpgid, a daemon), which the keeper looks for below squallrun meanwhile
// (escapees.hpp). Those and the group get SIGTERM, and SIGKILL after the grace period, the
// group's the keeper's last act (it is in the group). Meanwhile, what the terminal sends the
// group while squallrun lends it the terminal (Ctrl-C, ^\, ^Z, a new window size) is passed
// on to squallrun's group, and a SIGTTIN or SIGTTOU that it sent the group (a process of the
// job read it, or wrote, in the background) to squallrun alone, which learns of them only so.
[[noreturn]] void run_keeper(int pipe_fd, pid_t launcher, pid_t launcher_group, std::int64_t grace_s) {
  setpgid(0, 0);
  for (int s : {SIGTERM, SIGHUP, SIGPIPE}) signal(s, SIG_IGN);
  sigset_t watched;
  sigemptyset(&watched);
  for (int s : {SIGINT, SIGQUIT, SIGTSTP, SIGWINCH, SIGTTIN, SIGTTOU}) {
    signal(s, SIG_DFL);  // an ignored signal never reaches the signalfd
    sigaddset(&watched, s);
  }
  sigprocmask(SIG_SETMASK, &watched, nullptr);
  const int signal_fd = signalfd(-1, &watched, SFD_CLOEXEC);
  const pid_t group = getpid();
  escapees escaped(group, group);
  // squallrun's pidfd is squallrun's if squallrun is still the keeper's parent once it is
  // open; if not (squallrun has already ended), or without pidfds, nothing escaped is known.
  const job_process launcher_process{launcher, open_pidfd(launcher)};
  const bool look = launcher_process.pidfd >= 0 && getppid() == launcher;
  auto next_look = std::chrono::steady_clock::now();
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (look && now >= next_look) {
      escaped.find({launcher_process});
      next_look = now + std::chrono::milliseconds(look_every_ms);
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_look - now).count();
    pollfd fds[2] = {{pipe_fd, POLLIN, 0}, {signal_fd, POLLIN, 0}};
    if (poll(fds, 2, look ? static_cast<int>(std::max<std::int64_t>(wait, 0)) : -1) < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) {
      char byte;
      if (read(pipe_fd, &byte, 1) <= 0) break;  // squallrun writes nothing: it has ended
    }
    signalfd_siginfo info;
    if (fds[1].revents == 0 || read(signal_fd, &info, sizeof info) != sizeof info) continue;
    if (info.ssi_code != SI_KERNEL || getppid() != launcher) continue;
    const int sig = static_cast<int>(info.ssi_signo);
    if (sig == SIGTTIN || sig == SIGTTOU) {
      kill(launcher, sig);
    } else {
      killpg(launcher_group, sig);
    }
  }
  const auto left_in_group = [group] {
    std::vector<pid_t> found;
    for (const process& p : all_processes()) {
      if (p.group == group && p.pid != group && p.state != 'Z') found.push_back(p.pid);
    }
    return found;
  };
  // What squallrun's end left of the job: its process group, and what escaped it, also from
  // the group's processes since the last look.
  const auto left = [&] {
    const auto in_group = left_in_group();
    std::vector<job_process> roots;
    for (const pid_t pid : in_group) {
      const job_process p{pid, open_pidfd(pid)};
      if (p.pidfd < 0) continue;
      const auto now = process_of(pid);  // once the pidfd is open: still the group's
      if (now && now->group == group) {
        roots.push_back(p);
      } else {
        close(p.pidfd);
      }
    }
    escaped.find(roots);
    for (const job_process& p : roots) close(p.pidfd);
    return in_group.size() + escaped.running();
  };
  // squallrun may have died with the terminal lent to the job.
  const int tty = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
  if (tty >= 0 && tcgetpgrp(tty) == group) tcsetpgrp(tty, launcher_group);
  const std::size_t n = left();
  if (n == 0) _exit(0);  // the job ended with squallrun, as it does when squallrun ends normally
  std::fprintf(stderr, "squallrun: the launcher (pid %d) ended while its job ran; stopping the %zu process(es) left\n",
               launcher, n);
  killpg(group, SIGTERM);
  killpg(group, SIGCONT);  // a stopped process ends on SIGTERM only once continued
  escaped.terminate();
  const auto kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(grace_s);
  while (left() != 0 && std::chrono::steady_clock::now() < kill_at) {
    escaped.terminate();  // those found since
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  escaped.kill();
  if (!left_in_group().empty()) killpg(group, SIGKILL);  // the keeper too, atomically with the rest
  _exit(0);
}

}  // namespace

keeper::keeper(std::int64_t grace_s) {
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "squallrun: cannot make the keeper's pipe (%s); if squallrun is killed, what the nodes started may outlive it\n",
                 std::strerror(errno));
    return;
  }
  const pid_t launcher = getpid();
  const pid_t launcher_group = getpgrp();  // here: once forked, squallrun may move the keeper first
  const pid_t p = fork();
  if (p == 0) {
    close(ends[1]);
    run_keeper(ends[0], launcher, launcher_group, grace_s);
  }
  close(ends[0]);
  if (p < 0) {
    std::fprintf(stderr, "squallrun: cannot start the keeper (%s); if squallrun is killed, what the nodes started may outlive it\n",
                 std::strerror(errno));
    close(ends[1]);
    return;
  }
  setpgid(p, p);  // as the keeper does, whichever runs first, so that the nodes may join it
  pid_ = p;
  group_ = p;
  pipe_ = ends[1];
}

void keeper::end() {
  if (pid_ <= 0) return;
  close(pipe_);
  waitpid(pid_, nullptr, 0);
  pid_ = 0;
  group_ = 0;
  pipe_ = -1;
}

}  // namespace squallrun
