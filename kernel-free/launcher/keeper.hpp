// SPDX-License-Identifier: BSD-3-Clause
// The keeper: a child of squallrun, not a node, that leads the job's process group and ends
// that group, and what of the job left it (escapees.hpp), once squallrun is gone, however it
// ends (SIGKILL included).
#pragma once
#include <sys/types.h>

#include <cstdint>

namespace squallrun {

class keeper {
 public:
  // Starts the keeper, before anything that a node would share with it (the job's memory,
  // --label's pipes) exists, so that it holds none of it. Without a keeper (it could not be
  // started, which is said on stderr) the job runs as before, in squallrun's process group,
  // which nothing ends after squallrun.
  explicit keeper(std::int64_t grace_s);
  keeper(const keeper&) = delete;
  keeper& operator=(const keeper&) = delete;
  // Nothing: squallrun's end, however it comes, is the keeper's cue (end for a normal one).
  ~keeper() = default;

  pid_t pid() const { return pid_; }
  // The job's process group, which the nodes join: the keeper's pid. 0: no keeper, the nodes
  // stay in squallrun's process group.
  pid_t group() const { return group_; }

  // At the job's end: the keeper sees its pipe end, finds its group empty and exits, and is
  // reaped, so that it does not outlive squallrun. There is no keeper after it.
  void end();

 private:
  pid_t pid_ = 0;
  pid_t group_ = 0;
  int pipe_ = -1;  // the write end of the keeper's pipe, held by squallrun alone
};

}  // namespace squallrun
