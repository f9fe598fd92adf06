// SPDX-License-Identifier: BSD-3-Clause
// Locks handed over by message: lock i of an array lives at node i % nodes, which grants it
// to one requester at a time and queues the others in arrival order (FIFO, so fair under
// contention). A node that releases a lock nobody else asked for keeps it, and takes it
// again without a message; the home asks for it back (a recall) when another node asks, and
// a lock granted while others wait goes back at its release. Given back, the home grants
// the lock to the next in line: a handoff costs two messages, or one when the releaser or the
// next holder is the home (the home asks, gives back and grants itself in place, without a
// message), and a recall of a kept lock one more. Issue 22 counted BARNES's lock round trip
// for every body in every step, though each body's cell lock is mostly taken by one node.
//
// Several program threads of a node may use an array at once. A node asks a home for a lock
// once, whichever of its threads want it; the lock goes from thread to thread inside the node
// without a message while the home has not asked for it back, and back to the home at the
// release after it has (then the node's remaining waiters ask again, behind the others).
//
// Handlers may run inside a fault handler on the SIGBUS path, so nothing they touch is
// allocated on the way: the lock states are made at creation, and each home's queue of
// waiting nodes is a list threaded through one "next" word per lock and node.
#include <unistd.h>

#include <array>
#include <atomic>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <squall/am.hpp>
#include <squall/collectives.hpp>
#include <squall/error.hpp>
#include <squall/runtime.hpp>
#include <squall/stats.hpp>
#include <squall/tsm.hpp>

#include "fail.hpp"
#include "segment_size.hpp"
#include "protocol/sync_points.hpp"
#include "stache.hpp"

namespace squall::tsm {
namespace {

stats::counter acquires("tsm.lock_acquires");
stats::counter kept("tsm.lock_acquires_kept");      // of those, of a lock this node had kept: no message
stats::counter passed("tsm.lock_passed_in_node");   // of those, from another thread of this node
stats::counter queued("tsm.lock_requests_queued");  // by this node as home: the lock was out
stats::counter recalls("tsm.lock_recalls");         // by this node as home: asked a holder for a lock back

struct lock_state {
  std::int32_t holder = -1;            // uses or keeps the lock
  std::int32_t first = -1, last = -1;  // waiting nodes, oldest first
  bool recalled = false;               // the holder knows to give it back
};

// Per lock at this node, under the node lock: out (not here, perhaps requested), held (in
// use by one of its threads, or handed to a waiting one that has not taken it yet), or kept
// (here, unused); give_back when the home asked for it back. `ready` is what a waiting
// thread takes (set by the grant or by a thread's release), `owner` the thread using it.
struct lock_table {
  explicit lock_table(std::size_t count, std::size_t homed_here, std::size_t nodes)
      : at_home(homed_here),
        next(homed_here * nodes, -1),
        held(count),
        kept(count),
        give_back(count),
        requested(count),
        waiting(count),
        ready(new std::atomic<char>[count]()),
        owner(new std::atomic<std::int32_t>[count]()) {}
  std::vector<lock_state> at_home;   // index i / nodes, for the locks homed here
  std::vector<std::int32_t> next;    // per lock homed here and node: the node behind it in the queue
  std::vector<char> held, kept, give_back, requested;
  std::vector<std::int32_t> waiting;  // per lock: threads of this node waiting for it
  std::unique_ptr<std::atomic<char>[]> ready;
  std::unique_ptr<std::atomic<std::int32_t>[]> owner;  // the thread id, 0 for none
};

// Lock arrays by id; read by handlers while the program thread may create another, hence
// a fixed table of atomic pointers rather than a growing vector.
constexpr std::size_t max_arrays = 4096;
std::atomic<lock_table*> tables[max_arrays];
// Program thread only. Creation and destruction are collective, so every node takes and
// returns ids in the same order and an array has the same id everywhere.
std::uint32_t next_id = 0;
std::vector<std::uint32_t> returned_ids;

lock_table& table(std::uint32_t id) {
  lock_table* t = id < max_arrays ? tables[id].load(std::memory_order_acquire) : nullptr;
  if (t == nullptr) detail::fail("a lock message names lock array %u, which does not exist here", id);
  return *t;
}

std::int32_t this_thread() {
  thread_local const auto tid = static_cast<std::int32_t>(::gettid());
  return tid;
}

std::size_t slot_of(std::size_t i) { return i / static_cast<std::size_t>(squall::nodes()); }

int home_of(std::size_t i) { return static_cast<int>(i % static_cast<std::size_t>(squall::nodes())); }

std::int32_t& next_of(lock_table& t, std::size_t i, int node) {
  return t.next[slot_of(i) * static_cast<std::size_t>(squall::nodes()) + static_cast<std::size_t>(node)];
}

// This node's request for lock i was granted: one of its waiting threads takes the lock.
void granted(std::uint32_t id, std::uint64_t i, bool give_back) {
  lock_table& t = table(id);
  t.requested[i] = 0;
  t.held[i] = 1;
  t.give_back[i] = give_back ? 1 : 0;
  t.ready[i].store(1, std::memory_order_release);
}

void grant_msg(am::token&, std::uint32_t id, std::uint64_t i, bool give_back) { granted(id, i, give_back); }

// The home granting itself needs no message: it sets its own flags (under the node lock).
// `give_back`: others wait, so the lock returns at its release instead of being kept.
void hand_to(lock_state& l, std::uint32_t id, std::uint64_t i, int node, bool give_back) {
  l.holder = node;
  l.recalled = give_back;
  if (node == squall::node()) {
    granted(id, i, give_back);
  } else {
    am::send<grant_msg>(node, id, i, give_back);
  }
}

void home_release(std::uint32_t id, std::uint64_t i, int from);
void release_msg(am::token& tok, std::uint32_t id, std::uint64_t i) { home_release(id, i, tok.source()); }

// At a lock's holder, under the node lock: a kept lock goes back to its home at once, one in
// use (or handed to a waiting thread) at its release.
void holder_recall(std::uint32_t id, std::uint64_t i) {
  lock_table& t = table(id);
  if (t.kept[i] == 0) {
    t.give_back[i] = 1;
    return;
  }
  t.kept[i] = 0;
  const int home = home_of(i);
  if (home == squall::node()) {
    home_release(id, i, home);
  } else {
    am::send<release_msg>(home, id, i);
  }
}

void recall_msg(am::token&, std::uint32_t id, std::uint64_t i) { holder_recall(id, i); }

void home_request(std::uint32_t id, std::uint64_t i, int from) {
  lock_table& t = table(id);
  lock_state& l = t.at_home[slot_of(i)];
  if (l.holder < 0) {
    hand_to(l, id, i, from, false);
    return;
  }
  queued.add();
  next_of(t, i, from) = -1;
  if (l.last < 0) {
    l.first = from;
  } else {
    next_of(t, i, l.last) = from;
  }
  l.last = from;
  if (l.recalled) return;
  l.recalled = true;
  recalls.add();
  if (l.holder == squall::node()) {
    holder_recall(id, i);
  } else {
    am::send<recall_msg>(l.holder, id, i);
  }
}

void request_msg(am::token& tok, std::uint32_t id, std::uint64_t i) { home_request(id, i, tok.source()); }

void home_release(std::uint32_t id, std::uint64_t i, int from) {
  lock_table& t = table(id);
  lock_state& l = t.at_home[slot_of(i)];
  if (l.holder != from) {
    detail::fail("node %d released lock %llu of array %u, which node %d holds", from,
                 static_cast<unsigned long long>(i), id, l.holder);
  }
  if (l.first < 0) {
    l.holder = -1;
    l.recalled = false;
    return;
  }
  const int next = l.first;
  l.first = next_of(t, i, next);
  if (l.first < 0) l.last = -1;
  hand_to(l, id, i, next, l.first >= 0);
}

// Runs a request or a release at lock i's home: in place, under the node lock as its
// handler would run, when that is this node (no message to itself); else by message M.
template <void (*Here)(std::uint32_t, std::uint64_t, int), auto M>
void at_home(std::uint32_t id, std::size_t i) {
  const int home = home_of(i);
  if (home != squall::node()) {
    am::send<M>(home, id, std::uint64_t{i});
    return;
  }
  am::run_locked([&] { Here(id, i, home); });
}

}  // namespace

lock_array::lock_array(std::size_t count) : count_(count) {
  squall::detail::require_running("tsm::lock_array");
  const auto n = static_cast<std::size_t>(squall::nodes());
  const std::size_t homed_here = count / n + (count % n != 0 ? 1 : 0);
  // Checked before an id is taken or a table built, without wrapping: per lock 4 flags, a
  // waiting count, a ready flag and an owner; per lock homed here its state and n queue words.
  constexpr std::size_t per_lock = 4 + 4 + 1 + 4;
  const std::size_t per_homed = sizeof(lock_state) + n * sizeof(std::int32_t);
  const std::size_t budget = detail::state_budget_bytes();
  if (count > budget / per_lock || homed_here > (budget - count * per_lock) / per_homed) {
    throw usage_error("tsm::lock_array: " + std::to_string(count) +
                      " locks need more state on each node than a quarter of this host's memory");
  }
  if (!returned_ids.empty()) {
    id_ = returned_ids.back();
    returned_ids.pop_back();
  } else if (next_id < max_arrays) {
    id_ = next_id++;
  } else {
    throw usage_error("tsm::lock_array: more than 4096 lock arrays exist at once");
  }
  tables[id_].store(new lock_table(count, homed_here, n), std::memory_order_release);
  // Every node has the table before any request for it arrives (the allreduce waits for all),
  // and every node gave the same count and made its arrays in the same order: a lock's home
  // and slot are computed from both, and a request to a table of another size would be read
  // outside it.
  const auto r = squall::range_over_nodes(std::array<std::uint64_t, 2>{count, id_});
  if (!r[0].same() || !r[1].same()) {
    delete tables[id_].exchange(nullptr);
    returned_ids.push_back(id_);
    throw usage_error(!r[0].same()
                          ? "tsm::lock_array: the nodes gave different counts (from " + std::to_string(r[0].lowest) +
                                " to " + std::to_string(r[0].highest) + "); every node must make the same lock arrays"
                          : std::string("tsm::lock_array: the nodes made their lock arrays in different orders (or "
                                        "different numbers of them); every node must make the same ones"));
  }
}

lock_array::~lock_array() {
  // After squall::finalize (an array outliving the runtime's scope, or a static one) there is
  // nothing to wait for or give back: every node has stopped, no lock message runs again, and
  // the runtime does not restart. Only this node's table goes. (The fence, which needs the
  // runtime, threw from this destructor and ended the process through std::terminate.)
  if (squall::initialized()) squall::fence();  // every node is done with the locks, and every release has arrived
  delete tables[id_].exchange(nullptr);
  returned_ids.push_back(id_);
}

void lock_array::acquire(std::size_t i) {
  squall::detail::require_running("tsm::lock_array::acquire");
  if (i >= count_) throw usage_error("tsm::lock_array::acquire: lock " + std::to_string(i) + " of " + std::to_string(count_));
  lock_table& t = table(id_);
  if (t.owner[i].load(std::memory_order_relaxed) == this_thread()) {
    throw usage_error("tsm::lock_array::acquire: this thread already holds lock " + std::to_string(i));
  }
  acquires.add();
  detail::stache::let_go();
  bool was_kept = false, ask = false;
  am::run_locked([&] {
    if (t.kept[i] != 0) {
      was_kept = true;
      t.kept[i] = 0;
      t.held[i] = 1;
      return;
    }
    ++t.waiting[i];
    // Asked once per node: while it is here or asked for, this thread waits its turn.
    if (t.held[i] == 0 && t.requested[i] == 0) {
      t.requested[i] = 1;
      ask = true;
    }
  });
  if (was_kept) {
    kept.add();
  } else {
    if (ask) at_home<home_request, request_msg>(id_, i);
    // A holder that keeps the lock (its node waits elsewhere) is waited for, and said.
    am::wait_until_noticed(
        [&t, i] {
          char one = 1;
          if (!t.ready[i].compare_exchange_strong(one, 0)) return false;
          --t.waiting[i];  // pred runs under the node lock
          return true;
        },
        [this, i] {
          return "lock " + std::to_string(i) + " of tsm::lock_array " + std::to_string(id_) + " (homed at node " +
                 std::to_string(home_of(i)) + ")";
        });
  }
  t.owner[i].store(this_thread(), std::memory_order_relaxed);
  detail::after_acquire();
  std::atomic_signal_fence(std::memory_order_seq_cst);  // the critical section stays after this
}

void lock_array::release(std::size_t i) {
  squall::detail::require_running("tsm::lock_array::release");
  if (i >= count_) throw usage_error("tsm::lock_array::release: lock " + std::to_string(i) + " of " + std::to_string(count_));
  lock_table& t = table(id_);
  if (t.owner[i].load(std::memory_order_relaxed) != this_thread()) {
    throw usage_error("tsm::lock_array::release: this thread does not hold lock " + std::to_string(i));
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);  // and before this
  t.owner[i].store(0, std::memory_order_relaxed);
  detail::before_release();
  bool give_back = false, ask_again = false, pass = false;
  am::run_locked([&] {
    if (t.give_back[i] != 0) {  // the home asked for it: back it goes, and this node's waiters queue again
      give_back = true;
      t.give_back[i] = 0;
      t.held[i] = 0;
      if (t.waiting[i] > 0) {
        t.requested[i] = 1;
        ask_again = true;
      }
    } else if (t.waiting[i] > 0) {  // to a thread of this node, without a message
      pass = true;
      t.ready[i].store(1, std::memory_order_release);
    } else {
      t.held[i] = 0;
      t.kept[i] = 1;
    }
  });
  if (give_back) at_home<home_release, release_msg>(id_, i);
  if (ask_again) at_home<home_request, request_msg>(id_, i);
  if (pass) {
    passed.add();
    am::wake_waiters();
  }
}

}  // namespace squall::tsm
