// SPDX-License-Identifier: BSD-3-Clause
// The life of a PARMACS job: every node starts the runtime before main (MAIN_ENV's
// constructor calls squall_parmacs_boot); node 0 runs main and starts workers with CREATE;
// at node 0's exit every node stops together.
//
// Workers are threads: a node runs up to SQUALL_WORKERS_PER_NODE of them (main counts on
// node 0; by default the node's processors), which share the node's copy of the memory
// through the hardware, as threads do. CREATE fills node 0 first, then node 1, and so on (as
// ArgoDSM places its threads); with one worker per node (SQUALL_WORKERS_PER_NODE=1, or one
// node per processor: squallrun -n P on a host of P) every worker is its own coherence
// domain, the papers' setting. A worker has a slot, node * per_node + k; node 0 keeps which slots run a function,
// and a worker tells it when its function returns. WAIT_FOR_END waits for all of them,
// whatever its argument (forms differ on whether it counts main).
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

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include <squall/am.hpp>
#include <squall/error.hpp>
#include <squall/memory.hpp>
#include <squall/parmacs.h>
#include <squall/runtime.hpp>
#include <squall/tsm.hpp>
#include <squall/tsm/protocol.hpp>

#include <squall/settings.hpp>
#include "parmacs/parmacs.hpp"
#include "protocol/sync_points.hpp"

extern char** environ;

namespace squall::tsm::parmacs {
namespace {

using entry = void* (*)(void*);

struct job {
  byte_range data;                                      // the program's globals, shared
  long per_node = 1;                                    // SQUALL_WORKERS_PER_NODE
  std::unique_ptr<std::atomic<bool>[]> busy;            // node 0: per slot, runs a function
  std::atomic<long> busy_count{0};                      // node 0
  std::atomic<bool> main_can_arrive{true};              // node 0: main may still reach a barrier
  std::unique_ptr<std::atomic<std::uintptr_t>[]> assigned;  // per slot here: the function to run
  std::unique_ptr<std::thread[]> threads;               // per slot here: the worker's thread
  std::atomic<bool> ended{false};                       // a worker node: node 0 ended the job
};
job* the_job = nullptr;
thread_local bool in_function = false;  // this thread runs a worker's function
thread_local long my_slot = 0;          // this thread's slot on its node (main: 0)

void run_msg(am::token&, std::uint64_t function, std::int64_t k) { the_job->assigned[k].store(function); }

// Whether CREATE assigned a function here that has not started yet.
bool any_assigned() {
  for (long k = 0; k < the_job->per_node; ++k) {
    if (the_job->assigned[k].load() != 0) return true;
  }
  return false;
}
void end_msg(am::token&) { the_job->ended.store(true); }
void done_msg(am::token& t, std::int64_t k) {
  the_job->busy[t.source() * the_job->per_node + k].store(false);
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

void join_workers() {
  for (long k = 0; k < the_job->per_node; ++k) {
    if (the_job->threads[k].joinable()) the_job->threads[k].join();
  }
}

void end_of_job() {
  the_job->main_can_arrive.store(false);
  am::send<recheck_msg>(0);
  am::wait_until([] { return the_job->busy_count.load() == 0; });
  join_workers();
  tsm::detail::after_acquire();  // the workers' writes, for main's exit handlers
  for (int i = 1; i < squall::nodes(); ++i) am::send<end_msg>(i);
  finish();
}

// Every node, at exit(status): see the top of this file.
void at_exit(int status, void*) {
  if (!squall::initialized()) return;  // the job has ended (finish)
  if (in_function) {
    flush_output();
    end_job(status, "a worker on node %d exited with status %d; the job ends", squall::node(), status);
  }
  if (squall::node() != 0) return;
  const long running = the_job->busy_count.load();
  if (status != 0 && running > 0) {
    flush_output();
    end_job(status, "main (node 0) exited with status %d while %ld worker(s) ran; the job ends", status, running);
  }
  end_of_job();
}

// A worker's thread: runs f in slot k, then tells node 0.
void run_worker(std::uintptr_t f, long k) {
  my_slot = k;
  in_function = true;
  tsm::detail::after_acquire();  // main's writes before CREATE
  reinterpret_cast<entry>(f)(nullptr);
  in_function = false;
  tsm::detail::before_release();  // this worker's writes, before node 0 hears that it ended
  flush_output();  // its output is out before node 0 hears that it ended
  am::send<done_msg>(0, std::int64_t{k});
  am::flush();
}

// Starts a thread for the function in slot k (its previous thread, if any, has ended).
void start_worker(long k) {
  std::thread& t = the_job->threads[k];
  if (t.joinable()) t.join();
  try {
    t = std::thread(run_worker, the_job->assigned[k].exchange(0), k);
  } catch (const std::system_error& e) {  // std::terminate's message named no worker nor limit
    fail("CREATE: cannot start worker %ld's thread: %s (a user's limit of processes, 'ulimit -u', counts "
         "threads: raise it, or set fewer SQUALL_WORKERS_PER_NODE)", k, std::strerror(e.code().value()));
  }
}

// The main thread of nodes other than 0: starts the functions CREATE assigns here.
[[noreturn]] void serve_as_worker() {
  for (;;) {
    am::wait_until([] { return any_assigned() || the_job->ended.load(); });
    if (!any_assigned()) break;
    if (the_job->per_node == 1) {
      // One worker per node (the papers' setting): it runs on this thread, which the
      // runtime favours (the node lock's bias, staged sends), as before workers were threads.
      run_worker(the_job->assigned[0].exchange(0), 0);
      continue;
    }
    for (long k = 0; k < the_job->per_node; ++k) {
      if (the_job->assigned[k].load() != 0) start_worker(k);
    }
  }
  join_workers();
  finish();
  std::exit(0);
}

// SQUALL_WORKERS_PER_NODE: how many workers (threads) CREATE starts on a node; by default as
// many as the node has processors (squall::processors()), so that the workers of one host
// share its memory in hardware. Another protocol than stache keeps one: the
// release-consistent ones keep per-node state that their hooks change without a lock.
long configured_workers_per_node(std::string_view protocol) {
  const std::int64_t fallback = protocol == "stache" ? squall::processors() : 1;
  const auto w = static_cast<long>(settings::number("SQUALL_WORKERS_PER_NODE", fallback, 1, 1024));
  if (w > 1 && protocol != "stache") {
    fail("SQUALL_WORKERS_PER_NODE=%ld: the %.*s protocol runs one worker per node; unset one of them", w,
         static_cast<int>(protocol.size()), protocol.data());
  }
  return w;
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
    const std::string_view protocol = chosen_protocol();
    the_job->per_node = configured_workers_per_node(protocol);
    const auto slots = static_cast<std::size_t>(the_job->per_node);
    the_job->busy = std::make_unique<std::atomic<bool>[]>(slots * static_cast<std::size_t>(squall::nodes()));
    the_job->assigned = std::make_unique<std::atomic<std::uintptr_t>[]>(slots);
    the_job->threads = std::make_unique<std::thread[]>(slots);
    memory::expect_concurrent_faults(static_cast<int>(std::min<long>(the_job->per_node, 64)));
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
  if (squall::node() != 0 || in_function) fail("CREATE: only main (node 0) starts workers");
  const long count = workers < 0 ? 1 : workers - 1;
  const long per_node = the_job->per_node;
  const long slots = per_node * squall::nodes();
  // Every worker counts as running before the first one starts: a started worker may reach a
  // BARRIER, and node 0's handlers check it against the running count, before this loop ends.
  // Slot 0 is main's.
  std::vector<long> started;
  for (long k = 0; k < count; ++k) {
    long idle = 1;
    while (idle < slots && the_job->busy[idle].load()) ++idle;
    if (idle == slots) {
      const long needed = the_job->busy_count.load() + count + 1;  // places: the running, these, main
      // CREATE(f, P) says how many workers there will be; CREATE(f) in a loop does not, so
      // further calls may want more nodes than this one knows of.
      fail("CREATE: the program starts more workers than the %ld place(s) besides main (%d node(s), %ld worker(s) "
           "per node); run squallrun -n %ld%s, set SQUALL_WORKERS_PER_NODE to run several on a node as threads, "
           "or ask the program for fewer processes",
           slots - 1, squall::nodes(), per_node, (needed + per_node - 1) / per_node,
           workers < 0 ? " or more (one place per process the program starts)" : "");
    }
    the_job->busy[idle].store(true);
    started.push_back(idle);
  }
  the_job->busy_count.fetch_add(count);
  tsm::detail::before_release();  // main's writes reach the workers
  const auto fn = reinterpret_cast<std::uintptr_t>(f);
  for (const long slot : started) {
    const long node = slot / per_node, k = slot % per_node;
    if (node == 0) {
      the_job->assigned[k].store(fn);
      start_worker(k);
    } else {
      am::send<run_msg>(static_cast<int>(node), std::uint64_t{fn}, std::int64_t{k});
    }
  }
  am::flush();
  if (workers >= 0) reinterpret_cast<entry>(reinterpret_cast<void*>(f))(nullptr);
}

extern "C" void squall_parmacs_wait_for_end(long) {
  if (squall::node() != 0 || in_function) fail("WAIT_FOR_END: only main (node 0) waits for the workers");
  the_job->main_can_arrive.store(false);
  am::send<recheck_msg>(0);
  am::wait_until([] { return the_job->busy_count.load() == 0; });
  join_workers();
  tsm::detail::after_acquire();  // the workers' writes
  the_job->main_can_arrive.store(true);
}

namespace squall::tsm::parmacs {
long workers_per_node() { return the_job->per_node; }
long worker_slot() { return my_slot; }
}  // namespace squall::tsm::parmacs
