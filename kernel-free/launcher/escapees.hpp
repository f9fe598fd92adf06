// SPDX-License-Identifier: BSD-3-Clause
// The keeper's list of the job's processes that left its process group (setsid, setpgid, a
// daemon's double fork), which the group's signals miss. They are found below squallrun
// while it runs, a few times a second, and held by pidfds: once squallrun is gone, its
// children pass to init and nothing ties them to the job any more, and a pid reused
// meanwhile must never be signalled. A process that escapes and is still unseen when
// squallrun is killed (in the last fraction of a second) is not known and outlives the job.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <vector>

namespace squallrun {

// A process the caller knows to be of the job, and a pidfd for it that proves it still is
// the process that had that pid (not one that took the pid since).
struct job_process {
  pid_t pid = 0;
  int pidfd = -1;
};

int open_pidfd(pid_t pid);  // -1 if it cannot (ended, or no pidfds: Linux before 5.3)

class escapees {
 public:
  // Those outside process group `group` (the keeper's); `keeper` is never counted, nor walked.
  escapees(pid_t group, pid_t keeper) : group_(group), keeper_(keeper) {}
  escapees(const escapees&) = delete;
  escapees& operator=(const escapees&) = delete;
  ~escapees();

  // Adds every process outside the group found below `roots` or below one already held,
  // through /proc/P/task/T/children, and lets go of those held that ended.
  void find(const std::vector<job_process>& roots);
  std::size_t running();
  // SIGTERM, and SIGCONT (a stopped process ends on SIGTERM only once continued), to each
  // held process that had neither yet.
  void terminate();
  void kill();

 private:
  struct held {
    job_process process;
    bool terminated = false;
  };
  void walk(job_process parent, std::vector<pid_t>& walked);
  bool holds(pid_t pid) const;

  pid_t group_;
  pid_t keeper_;
  std::vector<held> held_;
};

}  // namespace squallrun
