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
// Handlers may run inside a fault handler on the SIGBUS path, so nothing they touch is
// allocated on the way: the lock states are made at creation, and the queue of waiters is
// a list threaded through one "next" word per node (a node waits for one lock at a time).
#include <atomic>
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
stats::counter queued("tsm.lock_requests_queued");  // by this node as home: the lock was out
stats::counter recalls("tsm.lock_recalls");         // by this node as home: asked a holder for a lock back

struct lock_state {
  std::int32_t holder = -1;            // uses or keeps the lock
  std::int32_t first = -1, last = -1;  // waiting nodes, oldest first
  bool recalled = false;               // the holder knows to give it back
};

// Per lock at this node: free (not here), held (in use), kept (here, unused) or held with
// give_back (return it at release). held is the program thread's; kept and give_back change
// under the node lock, as the home's recall may arrive at any time.
struct lock_table {
  std::vector<lock_state> at_home;   // index i / nodes, for the locks homed here
  std::vector<std::int32_t> next;    // per node: the node behind it in a queue here
  std::vector<bool> held;            // per lock: this node holds it
  std::vector<bool> kept;            // per lock: this node keeps it, unused
  std::vector<bool> give_back;       // per lock: the home asked for it back
  bool granted = false;              // this node's request in flight was granted
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

std::size_t slot_of(std::size_t i) { return i / static_cast<std::size_t>(squall::nodes()); }

int home_of(std::size_t i) { return static_cast<int>(i % static_cast<std::size_t>(squall::nodes())); }

void granted(std::uint32_t id, std::uint64_t i, bool give_back) {
  lock_table& t = table(id);
  t.granted = true;
  t.give_back[i] = give_back;
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
// use at its release.
void holder_recall(std::uint32_t id, std::uint64_t i) {
  lock_table& t = table(id);
  if (!t.kept[i]) {
    t.give_back[i] = true;
    return;
  }
  t.kept[i] = false;
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
  t.next[from] = -1;
  if (l.last < 0) {
    l.first = from;
  } else {
    t.next[l.last] = from;
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
  l.first = t.next[next];
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
  const auto n = static_cast<std::size_t>(squall::nodes());
  const std::size_t homed_here = count / n + (count % n != 0 ? 1 : 0);
  // Checked before an id is taken or a table built, without wrapping.
  const std::size_t budget = detail::state_budget_bytes();
  if (count / 8 * 3 > budget || homed_here > (budget - count / 8 * 3) / sizeof(lock_state)) {
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
  auto* t = new lock_table;
  t->at_home.resize(homed_here);
  t->next.assign(n, -1);
  t->held.assign(count, false);
  t->kept.assign(count, false);
  t->give_back.assign(count, false);
  tables[id_].store(t, std::memory_order_release);
  squall::barrier();  // every node has the table before any request for it arrives
}

lock_array::~lock_array() {
  squall::fence();  // every node is done with the locks, and every release has arrived
  delete tables[id_].exchange(nullptr);
  returned_ids.push_back(id_);
}

void lock_array::acquire(std::size_t i) {
  if (i >= count_) throw usage_error("tsm::lock_array::acquire: lock " + std::to_string(i) + " of " + std::to_string(count_));
  lock_table& t = table(id_);
  if (t.held[i]) throw usage_error("tsm::lock_array::acquire: this node already holds lock " + std::to_string(i));
  acquires.add();
  detail::stache::let_go();
  bool was_kept = false;
  am::run_locked([&] {
    was_kept = t.kept[i];
    t.kept[i] = false;
    t.granted = false;
  });
  if (was_kept) {
    kept.add();
  } else {
    at_home<home_request, request_msg>(id_, i);
    am::wait_until([&t] { return t.granted; });
  }
  t.held[i] = true;
  detail::after_acquire();
  std::atomic_signal_fence(std::memory_order_seq_cst);  // the critical section stays after this
}

void lock_array::release(std::size_t i) {
  if (i >= count_) throw usage_error("tsm::lock_array::release: lock " + std::to_string(i) + " of " + std::to_string(count_));
  lock_table& t = table(id_);
  if (!t.held[i]) throw usage_error("tsm::lock_array::release: this node does not hold lock " + std::to_string(i));
  std::atomic_signal_fence(std::memory_order_seq_cst);  // and before this
  t.held[i] = false;
  detail::before_release();
  bool give_back = false;
  am::run_locked([&] {
    give_back = t.give_back[i];
    t.give_back[i] = false;
    t.kept[i] = !give_back;
  });
  if (give_back) at_home<home_release, release_msg>(id_, i);
}

}  // namespace squall::tsm
