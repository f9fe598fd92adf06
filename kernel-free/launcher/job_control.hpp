// SPDX-License-Identifier: BSD-3-Clause
// The job's terminal and the job-control signals. The job runs in a process group of its own
// (the keeper's, keeper.hpp), so the terminal would stop a node that reads it (SIGTTIN) and
// send Ctrl-C, ^\ and ^Z to squallrun's group alone. If squallrun's group has the terminal,
// squallrun lends it to the job's group, as a shell gives it to a job; the keeper, in that
// group, passes the terminal's signals on to squallrun's group (keeper.cpp), so that both
// groups have each of them once, as if they were one. squallrun takes the terminal back when
// it stops and when the job ends (the keeper, if squallrun is gone), and lends it again when
// continued in the foreground. SIGTTOU is blocked in squallrun (main), so that it may do so
// from the background.
#pragma once
#include <sys/signalfd.h>

#include "keeper.hpp"

namespace squallrun {

class job_control {
 public:
  // Opens squallrun's controlling terminal, if it has one that may be squallrun's to lend
  // (whether it is, lend_terminal tells). Made before squallrun changes SIGINT's disposition,
  // which it reads.
  explicit job_control(const keeper& keeper);

  void lend_terminal();
  void take_back_terminal();

  // `sig`, which squallrun had as `info`, to the processes of the job that do not have it yet:
  // from the terminal (code SI_KERNEL) it went to squallrun's whole process group, through the
  // keeper to the job's and squallrun's, and is passed on only beyond them, so that no process
  // has it twice.
  void pass_on(int sig, const signalfd_siginfo& info) const;

  // A stop signal (^Z's SIGTSTP; SIGTTIN or SIGTTOU, which the terminal sends to a group that
  // is not its foreground one when that reads it, or writes under `stty tostop`) stops the job
  // and then squallrun by the same signal, so that its shell sees the job stopped, as it would
  // were the job in squallrun's group, and takes the terminal back; SIGCONT (fg, bg) continues
  // squallrun and then the job, which gets the terminal again if squallrun was continued in
  // the foreground.
  void stop_job(const signalfd_siginfo& info);
  void continue_job();

 private:
  // Whether the terminal sent `info` to the job's process group, whose keeper passed it on.
  bool from_keeper(const signalfd_siginfo& info) const;

  const keeper& keeper_;
  // squallrun's controlling terminal, if squallrun's process group had it in the foreground
  // when the job started: it is then lent to the job's group while squallrun runs (see
  // lend_terminal). -1: none.
  int terminal_ = -1;
};

}  // namespace squallrun
