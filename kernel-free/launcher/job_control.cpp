// SPDX-License-Identifier: BSD-3-Clause
#include "job_control.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "processes.hpp"

namespace squallrun {

job_control::job_control(const keeper& keeper) : keeper_(keeper) {
  // A shell without job control starts a background command with SIGINT ignored, in the
  // shell's process group: the terminal, if that group has it, is not squallrun's to lend.
  // Unless squallrun leads its session (forkpty, setsid -c, ssh -t): then the terminal is its
  // own whatever it inherited (a test program started in the background, say).
  struct sigaction interrupt;
  sigaction(SIGINT, nullptr, &interrupt);
  if (interrupt.sa_handler != SIG_IGN || getsid(0) == getpid()) {
    terminal_ = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);  // none: -1
  }
}

void job_control::lend_terminal() {
  if (terminal_ >= 0 && keeper_.group() > 0 && tcgetpgrp(terminal_) == getpgrp()) tcsetpgrp(terminal_, keeper_.group());
}

void job_control::take_back_terminal() {
  if (terminal_ >= 0 && keeper_.group() > 0 && tcgetpgrp(terminal_) == keeper_.group()) tcsetpgrp(terminal_, getpgrp());
}

bool job_control::from_keeper(const signalfd_siginfo& info) const {
  return keeper_.pid() > 0 && info.ssi_code == SI_USER && static_cast<pid_t>(info.ssi_pid) == keeper_.pid();
}

void job_control::pass_on(int sig, const signalfd_siginfo& info) const {
  if (info.ssi_code == SI_KERNEL) {
    signal_job(keeper_.pid(), sig, getpgrp());
  } else if (from_keeper(info)) {
    signal_job(keeper_.pid(), sig, getpgrp(), keeper_.group());
  } else {
    signal_job(keeper_.pid(), sig, 0);
  }
}

void job_control::continue_job() {
  lend_terminal();
  signal_job(keeper_.pid(), SIGCONT, 0);
}

void job_control::stop_job(const signalfd_siginfo& info) {
  const int sig = static_cast<int>(info.ssi_signo);
  pass_on(sig, info);
  take_back_terminal();
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  raise(sig);  // blocked, so pending until
  sigprocmask(SIG_UNBLOCK, &one, nullptr);  // squallrun stops here, until a SIGCONT (continue_job)
  sigprocmask(SIG_BLOCK, &one, nullptr);
  // The kernel discards a stop signal in a process group that no shell can continue (an
  // orphaned one, as when squallrun leads its terminal's session itself: `ssh -t host
  // squallrun ...`); squallrun then runs on, having had no SIGCONT, and so does the job.
  sigset_t pending;
  sigpending(&pending);
  if (sigismember(&pending, SIGCONT) == 0) continue_job();
}

}  // namespace squallrun
