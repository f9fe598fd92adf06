// SPDX-License-Identifier: BSD-3-Clause
// Futures' slots: a request's result comes back to one (squall/arrays/scheduler.hpp's
// future), and get() runs the scheduler until it has.
//
// A request to an element that does not exist waits at the element's home, which may yet see
// it inserted. On one node get() knows at once that nothing will (every message is in its own
// queues); on several it cannot, and only the next quiesce answers. So that such a wait is
// never silent, the home tells the requester it holds the request (kind::held), and a get()
// still waiting after SQUALL_WAIT_NOTICE_S seconds says, once, what it waits for. The timed
// wait below serves quiesce's waves as well (scheduler.cpp).
#include <squall/am.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "runtime.hpp"

namespace squall::arrays::detail {

std::uint64_t open_slot() {
  runtime& r = rt();
  const std::uint64_t s = (static_cast<std::uint64_t>(r.me) << 40) | r.next_slot++;
  r.open_slots.insert(s);
  return s;
}

bool slot_ready(std::uint64_t s) { return rt().done_slots.count(s) != 0; }

namespace {
bool stop_when_ready(void* s) { return slot_ready(*static_cast<std::uint64_t*>(s)); }

// On one node, a get() with nothing left to run waits for what can never come. Says why.
[[noreturn]] void never_answered(std::uint64_t s) {
  for (array_state* a : rt().live) {
    if (const std::optional<key> k = a->drop_held_request(s)) {
      throw squall::usage_error("libarrays: a future's get() waits for element " + a->index_text(*k) + " of array " +
                                std::to_string(a->id()) +
                                ", which does not exist (never inserted, or deleted); the job's only node waits "
                                "here, so nothing can insert it");
    }
  }
  throw squall::usage_error("libarrays: a future's get() waits for a result that nothing left to run can send");
}

void say_still_waiting(runtime& r, std::uint64_t s) {
  ++r.counts.wait_notices;
  count().wait_notices.add_from_one_thread();
  const auto held = r.held_slots.find(s);
  if (held != r.held_slots.end()) {
    std::fprintf(stderr,
                 "squall: libarrays: node %d's get() has waited %lld s for a request to %s: it is answered if "
                 "the element is inserted, and fails at the next quiesce, which every node, this one too, must call\n",
                 r.me, static_cast<long long>(r.wait_notice_s), held->second.c_str());
  } else {
    std::fprintf(stderr,
                 "squall: libarrays: node %d's get() has waited %lld s for a request's result; its entry method "
                 "has not answered yet\n",
                 r.me, static_cast<long long>(r.wait_notice_s));
  }
}

// The notices' clock. A deferred call (am::call_at) cannot be cancelled and runs under the
// node lock on whichever thread polls, perhaps after its wait ended: so it only counts, in an
// atomic that outlives every wait, and at most one is pending at a time (the substrate allows
// 16). A wait woken by an earlier wait's call sets the next one for its own time.
std::atomic<std::uint64_t> notice_calls_run{0};
std::atomic<bool> notice_call_pending{false};
void notice_call(void*) {
  notice_calls_run.fetch_add(1);
  notice_call_pending.store(false);
}

struct timed_wait {
  bool (*done)(void*);
  void* ctx;
  bool (*wake)(void*);
  void* wake_ctx;
  std::uint64_t calls_seen;
};
bool call_ran(const timed_wait& w) { return notice_calls_run.load() != w.calls_seen; }
bool done_or_call_ran(void* p) {
  const auto& w = *static_cast<timed_wait*>(p);
  return w.done(w.ctx) || call_ran(w);
}
bool woken_or_call_ran(void* p) {
  const auto& w = *static_cast<timed_wait*>(p);
  return (w.wake != nullptr && w.wake(w.wake_ctx)) || call_ran(w);
}
}  // namespace

std::int64_t notice_due(const runtime& r) { return am::clock_ns() + r.wait_notice_s * 1'000'000'000; }

bool run_until_due(std::int64_t due, bool (*done)(void*), void* ctx, bool (*wake)(void*), void* wake_ctx) {
  timed_wait w{done, ctx, wake, wake_ctx, notice_calls_run.load()};
  for (;;) {
    if (!notice_call_pending.exchange(true)) am::call_at(due, notice_call, nullptr);
    run_until_woken(done_or_call_ran, &w, woken_or_call_ran, &w);
    if (done(ctx)) return true;
    if (am::clock_ns() >= due) return false;
    w.calls_seen = notice_calls_run.load();  // an earlier wait's call: wait for our own
  }
}

void wait_for_slot(std::uint64_t s) {
  runtime& r = rt();
  // A result taken already never comes again: waiting for it hung for ever.
  if (r.open_slots.count(s) == 0) throw squall::usage_error("libarrays: a future's result taken twice");
  check_scheduler("a future's get");
  if (r.nodes > 1) {
    if (r.wait_notice_s > 0 && !run_until_due(notice_due(r), stop_when_ready, &s, nullptr, nullptr)) {
      say_still_waiting(r, s);
    }
    return run_until_woken(stop_when_ready, &s, nullptr, nullptr);
  }
  // One node: messages to itself are all in its own queues (send()), so once they are empty
  // nothing else will come. A request to a missing index waited in get() for ever.
  while (!slot_ready(s)) {
    if (!run_some(stop_when_ready, &s, /*inbox=*/true)) never_answered(s);
  }
}

std::string take_slot(std::uint64_t s) {
  runtime& r = rt();
  auto it = r.done_slots.find(s);
  if (it == r.done_slots.end()) throw squall::usage_error("libarrays: a future's result taken twice");
  std::string v = std::move(it->second);
  r.done_slots.erase(it);
  r.open_slots.erase(s);
  r.held_slots.erase(s);
  if (auto f = r.failed_slots.find(s); f != r.failed_slots.end()) {
    r.failed_slots.erase(f);
    throw squall::usage_error(v);
  }
  return v;
}

}  // namespace squall::arrays::detail
