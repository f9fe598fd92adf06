// SPDX-License-Identifier: BSD-3-Clause
// The processes of a job, as /proc shows them: every process below squallrun but the keeper
// (keeper.hpp), that is the nodes, what they started, and what those left to squallrun (a
// child subreaper) when their parent ended; signalling them, and ending what the nodes left.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace squallrun {

struct process {
  pid_t pid = 0;
  pid_t parent = 0;
  pid_t group = 0;  // its process group
  char state = 0;   // 'Z': a zombie, ended
};

// Every process of this host that /proc shows.
std::vector<process> all_processes();
// Process `pid` as /proc/PID/stat shows it, or nothing (it has ended).
std::optional<process> process_of(pid_t pid);

// `sig` to every process of the job (`keeper`: the keeper's pid, 0 if none) but those of
// process groups `skip` and `skip_too` (0: none), not only to the nodes: a node that is a
// shell waiting for its command (one it does not exec) passes no signal on, and the command
// would run on until it ended by itself.
void signal_job(pid_t keeper, int sig, pid_t skip, pid_t skip_too = 0);

// Once every node has ended, what they left running gets SIGTERM, and SIGKILL after the
// grace period, so that no process of the job outlives it. A process killed passes its own
// children to squallrun (the subreaper), which ends them in turn.
void end_leftovers(pid_t keeper, std::int64_t grace_s);

}  // namespace squallrun
