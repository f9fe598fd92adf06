// SPDX-License-Identifier: BSD-3-Clause
// The PARMACS runtime's parts, shared by its files (squall/parmacs.h is the C face).
#pragma once
#include <cstddef>

namespace squall::tsm::parmacs {

// Ends the job: "squall parmacs: <what>" on standard error, then _exit(1), so that
// squallrun stops the other nodes. Safe in a message handler (no allocation, no stdio).
[[noreturn]] void fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// The same with exit status `status`.
[[noreturn]] void end_job(int status, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// The executable's writable data and bss, whole pages (job.cpp shares them).
struct byte_range {
  void* start = nullptr;
  std::size_t bytes = 0;
};
byte_range program_data();

// job.cpp: processes that can still reach a barrier (main unless it waits for the end,
// plus the workers running a function). Node 0 only.
long running_processes();
// Node 0: whether main runs free (neither in WAIT_FOR_END nor ended), so that it may still
// CREATE workers.
bool main_runs_free();

// job.cpp: SQUALL_WORKERS_PER_NODE, and the slot of the calling thread on its node (main
// and the workers' threads; 0 .. workers_per_node() - 1). A waiter at node 0 is
// node * workers_per_node() + slot.
long workers_per_node();
long worker_slot();

// sync.cpp: made collectively at boot; checks at node 0 whether a barrier can no longer
// complete because processes ended (job.cpp calls it when they do).
void start_sync();
void stop_sync();
void check_barriers();

}  // namespace squall::tsm::parmacs
