// SPDX-License-Identifier: BSD-3-Clause
// The scheduler: a node's entry methods run on its program thread (the one that created its
// first array), one at a time, whenever that thread runs the scheduler - in run_until,
// quiesce, or a future's get(). Messages that arrive meanwhile are queued by the substrate's
// handlers; one that arrives while the thread waits there with nothing queued may run at
// once, from the handler with the node lock let go. Either way entry methods never run under
// the node lock and may touch anything - except a method declared expedited (entry.hpp),
// which may run in the handler itself.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace squall::arrays {

// Runs entry methods until done() holds (tested between methods, and when idle).
void run_until(bool (*done)(void*), void* ctx);
template <class F>
void run_until(F&& done) {
  run_until([](void* c) { return (*static_cast<std::remove_reference_t<F>*>(c))(); }, &done);
}
// Collective: runs entry methods until no libarrays message is in flight or queued anywhere
// (a counting termination detection over the nodes). It keeps running them while it waits
// for the other nodes, so a node that has not called it yet and waits on an element here
// (a future's get()) is answered; nothing sent after another node returned from it runs in
// it. Afterwards every element has seen
// every broadcast, and nothing is held for a missing element unless the program sent to an
// index it never created (counted as arrays.held_at_quiescence, and reported). Locations a
// node remembers but has not used since the quiescence before are forgotten (a message to
// one goes by the home again).
//
// An entry method or a reduction that throws on a node while it quiesces does not leave the
// others waiting: that node goes on taking part, and at the end of the wave quiesce throws on
// every node - the exception itself on the node where it was thrown (the first one, if
// several were), `node_failed` on the others. A quiesce that throws ended its wave early:
// messages may still be in flight or queued (a request answered now may not see them yet);
// quiesce again for a quiescent point. A quiesce met by array::destroy() on other
// nodes throws squall::usage_error on every node, as destroy() does there. A quiesce (or
// destroy()) that other nodes do not reach, on a job of several nodes, says so once on
// standard error after SQUALL_WAIT_NOTICE_S seconds (60), and goes on waiting.
void quiesce();

// Thrown by quiesce on the nodes where nothing failed, when something did on another node:
// names that node (the lowest, if several failed) and says what it threw.
class node_failed : public std::runtime_error {
 public:
  node_failed(int node, const std::string& what);
  int node() const { return node_; }

 private:
  int node_;
};

// What this node's scheduler has done (also in SQUALL_STATS as arrays.*).
struct scheduler_counts {
  std::uint64_t sent = 0;        // messages, local ones included
  std::uint64_t handled = 0;     // messages taken from the queues
  std::uint64_t invoked = 0;     // entry methods run (broadcast deliveries included)
  std::uint64_t forwarded = 0;   // messages sent on to another node
  std::uint64_t routing_updates = 0;
  std::uint64_t migrations_out = 0, migrations_in = 0;
  std::uint64_t held = 0;        // messages held (buffered) for an element not yet there
  std::uint64_t cache_expired = 0;  // remembered locations forgotten at quiescence, unused
  std::uint64_t expedited = 0;   // messages run in the substrate's handler (entry.hpp)
  std::uint64_t direct = 0;      // messages run from the handler, the node lock let go
  std::uint64_t wait_notices = 0;  // get()s and quiesces that said what they wait for (SQUALL_WAIT_NOTICE_S)
};
scheduler_counts counts();

namespace detail {
// Future slots: a request's result comes back to one (array.hpp's future).
std::uint64_t open_slot();
bool slot_ready(std::uint64_t slot);
void wait_for_slot(std::uint64_t slot);  // runs the scheduler until it is ready; throws if taken
std::string take_slot(std::uint64_t slot);
}  // namespace detail

template <class R>
class future {
 public:
  explicit future(std::uint64_t slot) : slot_(slot) {}
  bool ready() const { return detail::slot_ready(slot_); }
  // Runs the scheduler until the result is here. Not inside an entry method; once per
  // request (a second get(), on this future or a copy, throws squall::usage_error).
  // A request to an element that does not exist waits at the element's home, since it may
  // yet be inserted; it fails (get() throws, naming it) when the system knows it never will
  // be: on one node as soon as nothing is left to run, on several at the next quiesce,
  // which every node, the requester too, must call - so a node that may have asked for a
  // missing element calls quiesce before get(). On several nodes, a get() still waiting after
  // SQUALL_WAIT_NOTICE_S seconds (60) says once, on standard error, what it waits for.
  R get() {
    detail::wait_for_slot(slot_);
    auto [r] = detail::decode<R>(detail::take_slot(slot_), "an entry method's result");
    return r;
  }

 private:
  std::uint64_t slot_;
};

}  // namespace squall::arrays
