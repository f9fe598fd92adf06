// SPDX-License-Identifier: BSD-3-Clause
// The life of a PARMACS job: every node starts the runtime before main (MAIN_ENV's
// constructor calls squall_parmacs_boot); node 0 runs main and hands functions to the other
// nodes with CREATE; at node 0's exit every node stops together.
//
// Node 0 keeps which workers run a function; a worker tells it when its function returns.
// WAIT_FOR_END waits for all of them, whatever its argument (forms differ on whether it
// counts main).
//
// CREATE and the end of a worker's function order memory as a thread's start and join do:
// the sender releases (a release-consistent protocol's writes go home) before its message,
// the receiver acquires after it (stale copies go).
//
// exit(n) in a worker's function ends the whole job, as it would end every thread of a
// threaded program: the worker says so and leaves at once with status n, before any
// destructor could wait for the others (a lock_array's is collective), and the runtime
// reports it lost to every other node. So does main's exit(n), n != 0, while workers run.
#include <sys/personality.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <vector>

#include <squall/am.hpp>
#include <squall/error.hpp>
#include <squall/parmacs.h>
#include <squall/runtime.hpp>
#include <squall/tsm.hpp>
#include <squall/tsm/protocol.hpp>

#include "parmacs/parmacs.hpp"
#include "protocol/sync_points.hpp"

extern char** environ;

namespace squall::tsm::parmacs {
namespace {

using entry = void* (*)(void*);

struct job {
  byte_range data;                                      // the program's globals, shared
  std::unique_ptr<std::atomic<bool>[]> busy;            // node 0: per node, runs a function
  std::atomic<long> busy_count{0};                      // node 0
  std::atomic<bool> main_can_arrive{true};              // node 0: main may still reach a barrier
  std::atomic<std::uintptr_t> assigned{0};              // a worker: the function to run
  std::atomic<bool> ended{false};                       // a worker: node 0 ended the job
  std::atomic<bool> in_function{false};                 // a worker: runs the function
};
job* the_job = nullptr;

void run_msg(am::token&, std::uint64_t function) { the_job->assigned.store(function); }
void end_msg(am::token&) { the_job->ended.store(true); }
void done_msg(am::token& t) {
  the_job->busy[t.source()].store(false);
  the_job->busy_count.fetch_sub(1);
  check_barriers();
}
void recheck_msg(am::token&) { check_barriers(); }  // on node 0, under the node lock

// Address randomisation off, so that every node has the same layout: the executable, its
// data, the libraries and the heaps at the same addresses. Runs the program again once.
void fix_the_layout(char** argv) {
  const int current = personality(0xffffffff);
  if (current == -1 || (current & ADDR_NO_RANDOMIZE) != 0) return;
  if (personality(static_cast<unsigned long>(current) | ADDR_NO_RANDOMIZE) == -1) return;
  execve("/proc/self/exe", argv, environ);
  // Not restarted: sharing the globals then reports that the nodes' layouts differ.
}

// SQUALL_TSM_PROTOCOL: the protocol of every segment the program gets (its globals, the
// heaps of G_MALLOC); stache when unset. A name nobody registered ends the job.
std::string_view chosen_protocol() {
  const char* v = std::getenv("SQUALL_TSM_PROTOCOL");
  if (v == nullptr || *v == '\0' || std::string_view(v) == "stache") return "stache";
  try {
    (void)tsm::make_protocol(v);  // loads libsquall-xsm if the name needs it
  } catch (const std::exception& e) {
    fail("SQUALL_TSM_PROTOCOL: %s", e.what());
  }
  return v;
}

void flush_output() {
  std::fflush(stdout);
  std::fflush(stderr);
}

// Every node, together: the globals become private again, each node holding their last
// bytes (what runs after, such as the executable's destructors, still reads them), then
// the runtime stops.
void finish() {
  flush_output();
  stop_sync();
  tsm::unshare(the_job->data.start);
  squall::finalize();
}

void end_of_job() {
  the_job->main_can_arrive.store(false);
  am::send<recheck_msg>(0);
  am::wait_until([] { return the_job->busy_count.load() == 0; });
  tsm::detail::after_acquire();  // the workers' writes, for main's exit handlers
  for (int i = 1; i < squall::nodes(); ++i) am::send<end_msg>(i);
  finish();
}

// Every node, at exit(status): see the top of this file.
void at_exit(int status, void*) {
  if (!squall::initialized()) return;  // the job has ended (finish)
  if (squall::node() != 0) {
    if (!the_job->in_function.load()) return;
    flush_output();
    end_job(status, "worker node %d exited with status %d; the job ends", squall::node(), status);
  }
  const long running = the_job->busy_count.load();
  if (status != 0 && running > 0) {
    flush_output();
    end_job(status, "main (node 0) exited with status %d while %ld worker(s) ran; the job ends", status, running);
  }
  end_of_job();
}

[[noreturn]] void serve_as_worker() {
  for (;;) {
    am::wait_until([] { return the_job->assigned.load() != 0 || the_job->ended.load(); });
    const std::uintptr_t f = the_job->assigned.exchange(0);
    if (f == 0) break;
    the_job->in_function.store(true);
    tsm::detail::after_acquire();  // main's writes before CREATE
    reinterpret_cast<entry>(f)(nullptr);
    the_job->in_function.store(false);
    tsm::detail::before_release();  // this worker's writes, before node 0 hears that it ended
    flush_output();  // its output is out before node 0 hears that it ended
    am::send<done_msg>(0);
    am::flush();
  }
  finish();
  std::exit(0);
}

}  // namespace

bool main_runs_free() { return the_job->main_can_arrive.load(); }

long running_processes() {
  return (the_job->main_can_arrive.load() ? 1 : 0) + the_job->busy_count.load();
}

}  // namespace squall::tsm::parmacs

using namespace squall;
using namespace squall::tsm::parmacs;

extern "C" void squall_parmacs_boot(int argc, char** argv, char**, void (*)(void)) {
  if (the_job != nullptr) return;
  fix_the_layout(argv);
  // The thread fault path unless the user chose: with it every system call that writes into
  // shared memory (getcwd, stat, pipe...) waits for the protocol as a plain store does; on
  // the SIGBUS path only the interposed ones (read, fread...) can.
  setenv("SQUALL_FAULT_PATH", "thread", 0);
  try {
    squall::init(&argc, &argv);
    the_job = new job;
    the_job->busy = std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(squall::nodes()));
    const std::string_view protocol = chosen_protocol();
    tsm::init({.protocol = protocol});
    start_sync();
    the_job->data = program_data();
    tsm::share(the_job->data.start, the_job->data.bytes,
               {.block_size = 4096,
                .homes = memory::home_policy::function([](memory::block_index) { return 0; }),
                .protocol = protocol});
  } catch (const std::exception& e) {
    fail("cannot start: %s", e.what());
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // whole lines reach squallrun's terminal
  on_exit(at_exit, nullptr);  // not atexit: the handler needs the status
  if (squall::node() != 0) serve_as_worker();
}

extern "C" void squall_parmacs_create(void (*f)(void), long workers) {
  if (squall::node() != 0) fail("CREATE: only main (node 0) starts workers; node %d tried", squall::node());
  const long count = workers < 0 ? 1 : workers - 1;
  // Every worker counts as running before the first one starts: a started worker may reach a
  // BARRIER, and node 0's handlers check it against the running count, before this loop ends.
  std::vector<int> started;
  for (long k = 0; k < count; ++k) {
    int idle = 1;
    while (idle < squall::nodes() && the_job->busy[idle].load()) ++idle;
    if (idle == squall::nodes()) {
      const long needed = the_job->busy_count.load() + (count - k) + 1;
      // CREATE(f, P) says how many workers there will be; CREATE(f) in a loop does not, so
      // further calls may want more nodes than this one knows of.
      fail("CREATE: the program starts more workers than the %d node(s) besides node 0; run squallrun -n %ld%s, "
           "or ask the program for fewer processes",
           squall::nodes() - 1, needed, workers < 0 ? " or more (one per process the program starts)" : "");
    }
    the_job->busy[idle].store(true);
    started.push_back(idle);
  }
  the_job->busy_count.fetch_add(count);
  tsm::detail::before_release();  // main's writes reach the workers
  for (const int node : started) am::send<run_msg>(node, reinterpret_cast<std::uintptr_t>(f));
  am::flush();
  if (workers >= 0) reinterpret_cast<entry>(reinterpret_cast<void*>(f))(nullptr);
}

extern "C" void squall_parmacs_wait_for_end(long) {
  if (squall::node() != 0) fail("WAIT_FOR_END: only main (node 0) waits for the workers");
  the_job->main_can_arrive.store(false);
  am::send<recheck_msg>(0);
  am::wait_until([] { return the_job->busy_count.load() == 0; });
  tsm::detail::after_acquire();  // the workers' writes
  the_job->main_can_arrive.store(true);
}
