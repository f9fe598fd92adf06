// SPDX-License-Identifier: BSD-3-Clause
// PARMACS synchronisation on top of TSM: locks are one tsm::lock_array made at boot (lock
// ids handed out by node 0); barriers, pauses (semaphores) and global subscripts live at
// node 0, which queues the waiting workers (a waiter is a node and the worker's slot there)
// and answers them by message. Each object in shared memory holds only its id, so it can
// sit in G_MALLOC memory or a global.
//
// Node 0's tables are made at boot and never grow: its handlers may run inside one of its
// own fault handlers on the SIGBUS path, where nothing may allocate.
#include <atomic>
#include <cstdarg>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include <squall/am.hpp>
#include <squall/collectives.hpp>
#include <squall/error.hpp>
#include <squall/parmacs.h>
#include <squall/runtime.hpp>
#include <squall/stats.hpp>
#include <squall/tsm.hpp>

#include <squall/settings.hpp>
#include "parmacs/parmacs.hpp"
#include "protocol/sync_points.hpp"
#include "stache.hpp"

namespace squall::tsm::parmacs {
namespace {


stats::counter barrier_waits("parmacs.barrier_waits");
stats::counter pause_waits("parmacs.pause_waits");

enum class kind : std::uint8_t { none, barrier, pause, subscript };
const char* const kind_names[] = {"", "BARRIER", "PAUSE", "GETSUB"};

struct object {
  kind what = kind::none;
  long expected = 0;  // barrier: BARINIT's count (0: each BARRIER gives it)
  long episode = 0;   // barrier: the count of the episode in progress
  long arrived = 0;   // barrier: workers waiting in it; subscript: -1s given this round
  long value = 0;     // pause: published and not taken; subscript: the next one
  long first = -1, last = -1;  // waiters, oldest first
};

struct node0_tables {
  std::vector<object> objects;  // by id
  std::size_t used = 0;
  std::vector<long> next;       // per waiter: the one behind it in a queue (one wait at a time)
  std::size_t locks_used = 0;
  long waiting = 0;             // waiters in some queue here (a BARRIER or a WAITPAUSE)
  std::vector<char> queued;     // per waiter: in some queue here
};

std::size_t env_count(const char* name) {
  return static_cast<std::size_t>(settings::number(name, std::int64_t{1} << 16, 1, std::int64_t{1} << 26));
}

std::unique_ptr<lock_array> locks;
std::unique_ptr<node0_tables> node0;  // node 0 only
std::unique_ptr<std::atomic<bool>[]> granted;  // per slot on this node: its wait was answered

// ---- node 0 ----

long waiter_of(const am::token& t, std::int64_t slot) { return t.source() * workers_per_node() + slot; }

void grant_msg(am::token&, std::int64_t slot) { granted[slot].store(true); }
void grant(long waiter) {
  am::send<grant_msg>(static_cast<int>(waiter / workers_per_node()), std::int64_t{waiter % workers_per_node()});
}

void enqueue(object& o, long waiter) {
  ++node0->waiting;
  node0->queued[waiter] = 1;
  node0->next[waiter] = -1;
  if (o.last < 0) o.first = waiter; else node0->next[o.last] = waiter;
  o.last = waiter;
}
long dequeue(object& o) {
  --node0->waiting;
  const long waiter = o.first;
  node0->queued[waiter] = 0;
  o.first = node0->next[waiter];
  if (o.first < 0) o.last = -1;
  return waiter;
}

object& checked(std::uint64_t id, kind want, int from) {
  if (id == 0 || id > node0->used || node0->objects[id - 1].what != want) {
    fail("%s on node %d: the object was not initialised by %sINIT (or the memory holding it was overwritten)",
         kind_names[static_cast<int>(want)], from, want == kind::subscript ? "GS" : kind_names[static_cast<int>(want)]);
  }
  return node0->objects[id - 1];
}

std::uint64_t new_object_msg(am::token&, std::uint8_t what, long expected) {
  if (node0->used == node0->objects.size()) {
    fail("more than %zu barriers, pauses and global subscripts (raise SQUALL_PARMACS_OBJECTS)", node0->objects.size());
  }
  node0->objects[node0->used] = object{static_cast<kind>(what), expected};
  return ++node0->used;
}

std::uint64_t new_locks_msg(am::token&, std::uint64_t count) {
  if (count > locks->size() - node0->locks_used) {
    fail("LOCKINIT: more than %zu locks (raise SQUALL_PARMACS_LOCKS)", locks->size());
  }
  node0->locks_used += count;
  return node0->locks_used - count + 1;
}

void release_barrier(object& o) {
  while (o.first >= 0) grant(dequeue(o));
  o.arrived = 0;
}

void arrive_msg(am::token& t, std::uint64_t id, long count, std::int64_t slot) {
  object& o = checked(id, kind::barrier, t.source());
  const long n = count > 0 ? count : o.expected;
  if (n <= 0) fail("BARRIER on node %d: no count, neither in BARRIER nor in BARINIT", t.source());
  if (o.arrived == 0) {
    o.episode = n;
  } else if (n != o.episode) {
    fail("BARRIER: a worker on node %d entered it for %ld processes, but %ld before it for %ld", t.source(), n,
         o.arrived, o.episode);
  }
  enqueue(o, waiter_of(t, slot));
  if (++o.arrived == n) release_barrier(o);
  else check_barriers();
}

void pause_set_msg(am::token& t, std::uint64_t id) {
  object& o = checked(id, kind::pause, t.source());
  if (o.first >= 0) grant(dequeue(o)); else ++o.value;
}
void pause_clear_msg(am::token& t, std::uint64_t id) { checked(id, kind::pause, t.source()).value = 0; }
void pause_wait_msg(am::token& t, std::uint64_t id, std::int64_t slot) {
  object& o = checked(id, kind::pause, t.source());
  if (o.value > 0) {
    --o.value;
    grant(waiter_of(t, slot));
  } else {
    enqueue(o, waiter_of(t, slot));
    check_barriers();
  }
}

// Subscripts 0..max, each once; then -1 to each of the `processes` callers, after which the
// next round starts at 0 again (so a process that is done cannot take a late one's -1).
long take_subscript(std::uint64_t id, long max, long processes, int from) {
  object& o = checked(id, kind::subscript, from);
  if (o.value <= max) return o.value++;
  if (++o.arrived >= processes) {
    o.value = 0;
    o.arrived = 0;
  }
  return -1;
}
long getsub_msg(am::token& t, std::uint64_t id, long max, long processes) {
  return take_subscript(id, max, processes, t.source());
}

// ---- any node ----

// Sends message M to node 0 for this thread's slot and waits for its grant (a barrier's
// release, a pause taken); a long wait says what it waits for (SQUALL_WAIT_NOTICE_S).
template <auto M, class Describe, class... A>
void wait_at_node0(Describe describe, A... args) {
  const long slot = worker_slot();
  std::atomic<bool>& mine = granted[slot];
  mine.store(false);
  am::send<M>(0, args..., std::int64_t{slot});
  am::wait_until_noticed([&mine] { return mine.load(); }, describe);
}

std::uint64_t new_object(kind what, long expected) {
  return am::call<new_object_msg>(0, static_cast<std::uint8_t>(what), expected);
}

std::size_t lock_index(const squall_parmacs_lock_t* l, const char* macro) {
  const unsigned long id = l->id;
  if (id == 0 || id > locks->size()) fail("%s: the lock was not initialised by LOCKINIT or ALOCKINIT", macro);
  return id - 1;
}

}  // namespace

namespace {
[[noreturn]] void end_job_with(int status, const char* fmt, va_list args) {
  char text[1024];
  int n = snprintf(text, sizeof text, "squall parmacs (node %d): ", squall::initialized() ? squall::node() : -1);
  n += vsnprintf(text + n, sizeof text - static_cast<std::size_t>(n) - 1, fmt, args);
  if (n > static_cast<int>(sizeof text) - 2) n = static_cast<int>(sizeof text) - 2;
  text[n++] = '\n';
  (void)!write(STDERR_FILENO, text, static_cast<std::size_t>(n));
  _exit(status);
}
}  // namespace

void fail(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  end_job_with(1, fmt, args);
}

void end_job(int status, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  end_job_with(status, fmt, args);
}

void start_sync() {
  locks = std::make_unique<lock_array>(env_count("SQUALL_PARMACS_LOCKS"));
  granted = std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(workers_per_node()));
  if (squall::node() == 0) {
    const auto waiters = static_cast<std::size_t>(squall::nodes() * workers_per_node());
    node0 = std::make_unique<node0_tables>();
    node0->objects.resize(env_count("SQUALL_PARMACS_OBJECTS"));
    node0->next.assign(waiters, -1);
    node0->queued.assign(waiters, 0);
  }
  squall::barrier();  // node 0's tables exist before anyone asks
}

void stop_sync() { locks.reset(); }  // collective (a fence), before the runtime stops

namespace {
// "process" or "processes", for the messages.
const char* plural_es(long count) { return count == 1 ? "" : "es"; }
}  // namespace

void check_barriers() {
  const long running = running_processes();
  // Main running free may still CREATE the workers a barrier waits for (CREATE(f) in a loop):
  // then too few running is no error yet.
  const bool more_may_start = main_runs_free() && node0->queued[0] == 0;
  for (std::size_t i = 0; i < node0->used && !more_may_start; ++i) {
    const object& o = node0->objects[i];
    if (o.what == kind::barrier && o.arrived > 0 && o.episode > running) {
      fail("BARRIER waits for %ld process%s, but only %ld %s running (main, unless it waits in WAIT_FOR_END "
           "or has ended, and the workers CREATE started); %ld arrived",
           o.episode, plural_es(o.episode), running, running == 1 ? "is" : "are", o.arrived);
    }
  }
  // Every process that could still release a waiter waits itself (a process in LOCK is not
  // seen here, so this is a sure deadlock, though not every one).
  if (running > 0 && node0->waiting == running) {
    fail("every running process waits in a BARRIER or WAITPAUSE that only another process could end (%ld "
         "process%s: main unless it waits in WAIT_FOR_END or has ended, and the workers)",
         running, plural_es(running));
  }
}

}  // namespace squall::tsm::parmacs

using namespace squall;
using namespace squall::tsm::parmacs;

extern "C" {

void* squall_parmacs_malloc(size_t bytes, long home) {
  try {
    // A hint, as in SPLASH-2, naming a process: process p runs on node p / workers per node
    // when CREATE fills the nodes in order; a program run on fewer places than processes
    // names homes beyond the last node.
    return home < 0 ? tsm::malloc(bytes)
                    : tsm::malloc(bytes, static_cast<int>(home / workers_per_node() % squall::nodes()));
  } catch (const std::exception& e) {
    fail("G_MALLOC or NU_MALLOC: %s", e.what());
  }
}

void squall_parmacs_free(void* p) {
  try {
    tsm::heap_free(p);
  } catch (const std::exception& e) {
    fail("G_FREE: %s", e.what());
  }
}

void squall_parmacs_lock_init(squall_parmacs_lock_t* l, long count) {
  if (count <= 0) fail("ALOCKINIT: %ld locks", count);
  const std::uint64_t first = am::call<new_locks_msg>(0, static_cast<std::uint64_t>(count));
  for (long i = 0; i < count; ++i) l[i].id = first + static_cast<std::uint64_t>(i);
}

void squall_parmacs_lock(squall_parmacs_lock_t* l) {
  const std::size_t i = lock_index(l, "LOCK");
  try {
    locks->acquire(i);
  } catch (const std::exception& e) {
    fail("LOCK: %s", e.what());
  }
}

void squall_parmacs_unlock(squall_parmacs_lock_t* l) {
  const std::size_t i = lock_index(l, "UNLOCK");
  try {
    locks->release(i);
  } catch (const std::exception&) {
    fail("UNLOCK of a lock this process does not hold (lock %zu)", i);
  }
}

void squall_parmacs_barrier_init(squall_parmacs_barrier_t* b, long count) {
  if (count < 0) fail("BARINIT: a count of %ld", count);
  b->id = new_object(kind::barrier, count);
}

void squall_parmacs_barrier(squall_parmacs_barrier_t* b, long count) {
  if (count < 0) fail("BARRIER: a count of %ld", count);
  tsm::detail::before_barrier();
  barrier_waits.add();
  const std::uint64_t id = b->id;
  wait_at_node0<arrive_msg>(
      [id, count] {
        return "the other processes at BARRIER " + std::to_string(id) + " (" + std::to_string(count) +
               " processes, counted at node 0)";
      },
      id, count);
  tsm::detail::after_barrier();
}

void squall_parmacs_pause_init(squall_parmacs_pause_t* p) { p->id = new_object(kind::pause, 0); }
// SETPAUSE releases and WAITPAUSE acquires, as a semaphore's post and wait; GETSUB does
// both, as SPLASH-2's lock around the counter does. A release-consistent protocol's writes
// go home before the message that lets another process on.
void squall_parmacs_pause_set(squall_parmacs_pause_t* p) {
  tsm::detail::before_release();
  am::send<pause_set_msg>(0, std::uint64_t{p->id});
}
void squall_parmacs_pause_clear(squall_parmacs_pause_t* p) { am::send<pause_clear_msg>(0, std::uint64_t{p->id}); }
void squall_parmacs_pause_wait(squall_parmacs_pause_t* p) {
  tsm::detail::stache::let_go();
  pause_waits.add();
  const std::uint64_t id = p->id;
  wait_at_node0<pause_wait_msg>([id] { return "a SETPAUSE of pause " + std::to_string(id) + " (kept at node 0)"; }, id);
  tsm::detail::after_acquire();
}

void squall_parmacs_gs_init(squall_parmacs_gs_t* g) { g->id = new_object(kind::subscript, 0); }
long squall_parmacs_getsub(squall_parmacs_gs_t* g, long max, long processes) {
  tsm::detail::before_release();
  const std::uint64_t id = g->id;  // shared memory: read before taking the node lock
  long subscript = -1;
  if (node() == 0) {
    // Node 0's own workers take theirs under the node lock, as the handler would, rather
    // than by a message to themselves (n-body on one node: 1,032 of them in its 0.3 s).
    am::run_locked([&] { subscript = take_subscript(id, max, processes, 0); });
  } else {
    subscript = am::call<getsub_msg>(0, id, max, processes);
  }
  tsm::detail::after_acquire();
  return subscript;
}

unsigned long squall_parmacs_clock(void) {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);  // one clock across hosts too (as gettimeofday in SPLASH-2)
  return static_cast<unsigned long>(now.tv_sec) * 1000000ul + static_cast<unsigned long>(now.tv_nsec) / 1000ul;
}

}  // extern "C"
