// SPDX-License-Identifier: BSD-3-Clause
#include "call_order.hpp"

#include <squall/am.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

namespace squall::chaos::detail {
namespace {

// A waiting node first asks its silent peers after this long, then again this often (a
// question at a time per peer): rare enough to cost nothing, soon enough to end a stuck
// job within seconds.
constexpr std::int64_t ask_after_ns = 250'000'000;

struct call_record {
  std::uint64_t seq = UINT64_MAX;
  call_desc desc;
  std::uint64_t collectives_before = 0;  // collectives this node had begun when it made the call
  bool running = false;
};

// Guarded by the mutex: touched by the program's thread and by handlers.
std::mutex calls_mutex;
std::uint64_t calls_begun = 0;
std::array<call_record, 256> history;  // the latest calls, by seq % size
// Who sent for calls this node has not begun yet, and what they called.
std::map<std::uint64_t, std::vector<std::pair<int, call_desc>>>& early() {
  static auto* e = new std::map<std::uint64_t, std::vector<std::pair<int, call_desc>>>;  // handlers may run at exit
  return *e;
}
std::vector<char>& asking() {  // by node: a question is out, not yet answered
  static auto* a = new std::vector<char>;
  return *a;
}

std::string describe(const call_desc& d) {
  const std::string pattern = std::to_string(d.pattern);
  switch (d.kind) {
    case call_kind::gather: return "gather (schedule #" + pattern + ")";
    case call_kind::scatter: return "scatter (schedule #" + pattern + ")";
    case call_kind::scatter_op: return "scatter_op (schedule #" + pattern + ")";
    case call_kind::remap: return "remap_plan::apply (plan #" + pattern + ")";
    case call_kind::exchange: return "scatter_append or another exchange";
  }
  return "an unknown call";
}

// Every out-of-step verdict ends here. Its likeliest cause in a correct-looking program: a
// call that threw on one node only (the executor checks its input on that node alone, not to
// add a collective to every execution) and a caller that caught the error and went on.
[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "squall: chaos: node %d: executor calls out of step: %s; every node must make the same "
               "executor calls (gather, scatter, scatter_op, scatter_append, remap...) in the same order. A call "
               "that threw squall::usage_error on one node only (input bad there, such as a data array shorter than "
               "the schedule needs, or a moved-from schedule) was skipped by that node: look for its error\n",
               squall::node(), what.c_str());
  std::abort();
}

[[noreturn]] void fail_mismatch(std::uint64_t seq, const call_desc& mine, int peer, const call_desc& theirs) {
  fail("this node's call #" + std::to_string(seq) + " is " + describe(mine) + " but node " + std::to_string(peer) +
       "'s call #" + std::to_string(seq) + " is " + describe(theirs));
}

call_record* find(std::uint64_t seq) {
  call_record& r = history[seq % history.size()];
  return r.seq == seq ? &r : nullptr;
}

void on_where_reply(am::token& t, std::uint64_t seq, std::uint64_t peer_calls, std::uint64_t peer_collectives,
                    std::uint32_t known, std::uint32_t kind, std::uint64_t pattern, am::payload last_collective);

// Where this node stands, for a peer waiting in its call #seq. Collectives are counted
// before calls: a collective counted was begun after every call counted (no false verdict).
void on_where_query(am::token& t, std::uint64_t seq) {
  const auto position = squall::detail::collectives_position();
  std::uint64_t calls = 0;
  call_desc mine;
  std::uint32_t known = 0;
  {
    std::lock_guard<std::mutex> lock(calls_mutex);
    calls = calls_begun;
    if (const call_record* r = find(seq); r != nullptr) {
      mine = r->desc;
      known = 1;
    }
  }
  const std::string last = position.last;
  am::send<on_where_reply>(t.source(), seq, calls, position.begun, known, static_cast<std::uint32_t>(mine.kind),
                           mine.pattern, am::payload(reinterpret_cast<const std::byte*>(last.data()), last.size()));
}

void on_where_reply(am::token& t, std::uint64_t seq, std::uint64_t peer_calls, std::uint64_t peer_collectives,
                    std::uint32_t known, std::uint32_t kind, std::uint64_t pattern, am::payload last_collective) {
  const int peer = t.source();
  std::lock_guard<std::mutex> lock(calls_mutex);
  asking()[static_cast<std::size_t>(peer)] = 0;
  const call_record* r = find(seq);
  if (r == nullptr || !r->running) return;  // ended meanwhile
  if (peer_calls > seq) {
    const call_desc theirs{static_cast<call_kind>(kind), pattern};
    if (known != 0 && !(theirs == r->desc)) fail_mismatch(seq, r->desc, peer, theirs);
    return;  // the same call: its messages are on their way (or it sends none here)
  }
  if (peer_collectives > r->collectives_before) {
    const std::string last(reinterpret_cast<const char*>(last_collective.data()), last_collective.size());
    const std::string theirs = peer_calls == 0 ? "has made no executor call"
                                               : "has made only calls #0 to #" + std::to_string(peer_calls - 1);
    fail("this node's call #" + std::to_string(seq) + " is " + describe(r->desc) + " and waits for node " +
         std::to_string(peer) + ", which " + theirs + " and has gone on to a collective (its collective #" +
         std::to_string(peer_collectives - 1) + ", a " + last + ") that this node reaches only after its call #" +
         std::to_string(seq) + ": node " + std::to_string(peer) + " skipped that call or made another in its place");
  }
  // Not there yet: it may be computing. Asked again later.
}

void ask_where(std::uint64_t seq, const std::vector<int>& peers) {
  std::vector<int> ask;
  {
    std::lock_guard<std::mutex> lock(calls_mutex);
    asking().resize(static_cast<std::size_t>(squall::nodes()));
    for (int p : peers) {
      char& out = asking()[static_cast<std::size_t>(p)];
      if (out == 0) ask.push_back(p);
      out = 1;
    }
  }
  for (int p : ask) am::send<on_where_query>(p, seq);
  am::flush();
}

}  // namespace

std::uint64_t begin_call(call_desc d) {
  const std::uint64_t collectives = squall::detail::collectives_position().begun;
  std::lock_guard<std::mutex> lock(calls_mutex);
  const std::uint64_t seq = calls_begun++;
  history[seq % history.size()] = {seq, d, collectives, true};
  if (auto it = early().find(seq); it != early().end()) {
    for (const auto& [peer, theirs] : it->second) {
      if (!(theirs == d)) fail_mismatch(seq, d, peer, theirs);
    }
    early().erase(it);
  }
  return seq;
}

void end_call(std::uint64_t seq) {
  std::lock_guard<std::mutex> lock(calls_mutex);
  if (call_record* r = find(seq); r != nullptr) r->running = false;
}

void check_arrival(int source, std::uint64_t seq, call_desc theirs) {
  std::lock_guard<std::mutex> lock(calls_mutex);
  if (seq >= calls_begun) {
    early()[seq].emplace_back(source, theirs);
    return;
  }
  const call_record* r = find(seq);
  const std::string sent = "node " + std::to_string(source) + " sent a message for its call #" + std::to_string(seq) +
                           " (" + describe(theirs) + ")";
  if (r == nullptr) fail(sent + ", which this node made and ended long ago");
  if (!(r->desc == theirs)) fail_mismatch(seq, r->desc, source, theirs);
  if (!r->running) fail(sent + " after this node's call #" + std::to_string(seq) + " had received all it expects");
}

void wait_for_call(std::uint64_t seq, const std::function<bool()>& done,
                   const std::function<std::vector<int>()>& missing) {
  std::int64_t ask_at = am::clock_ns() + ask_after_ns;
  bool finished = false;
  std::vector<int> silent;
  for (;;) {
    am::wait_until([&] {
      if (done()) return finished = true;
      if (am::clock_ns() < ask_at) return false;
      silent = missing();
      return true;
    });
    if (finished) return;
    ask_where(seq, silent);
    ask_at = am::clock_ns() + ask_after_ns;
  }
}

}  // namespace squall::chaos::detail
