// SPDX-License-Identifier: BSD-3-Clause
// The node's scheduler: the substrate's handler queues each message (under the node lock);
// the program thread takes the queue whole and runs the messages one by one, entry methods
// included. Also the counting termination detection behind quiesce().
//
// Two exceptions to the queue, for latency. While the program thread waits in run_until with
// nothing queued, an invoke that arrives on that thread runs at once, from the handler
// (run_in_handler): leaving the wait and taking the queue cost each side of an element round
// trip about 40-60 ns, and the mailbox lane keeps a reply cheap only while it follows its
// request within tens of nanoseconds (kernel-free/TRANSPORTS.md).
// - An ordinary entry method that came through the mailbox lane runs with the node lock let
//   go (am::run_unlocked_in_handler), as program code: the scheduler's guarantee below holds.
// - An expedited one (entry.hpp) runs in the handler itself, under the node lock, so any
//   packet's may; it may not touch a shared segment's application view.
// Either way a message too large for a packet waits, with every later send of that run,
// until the handler is done, since a handler must not wait for a stream; and what the method
// throws is thrown by run_until. An expedited method of an array in place runs as an
// ordinary one: its element lives in a segment, which code under the node lock must not touch.
#include <squall/am.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>

#include <array>
#include <climits>
#include <cstdio>
#include <cstring>
#include <exception>
#include <span>
#include <string>
#include <utility>

#include "runtime.hpp"

namespace squall::arrays {
namespace detail {
namespace {

void append_framed(std::vector<char>& q, std::string_view m) {
  const auto n = static_cast<std::uint32_t>(m.size());
  const char* len = reinterpret_cast<const char*>(&n);
  q.insert(q.end(), len, len + sizeof n);
  q.insert(q.end(), m.begin(), m.end());
}

// An ordinary invoke run from the handler with the node lock let go (see the top): its bytes
// are copied first, since another thread may take the mailbox's next packet meanwhile.
struct direct_invoke {
  // More than a mailbox packet's payload can be (a 56-byte line less a 16-byte record
  // header): a larger message never came through the lane, so it is queued.
  static constexpr std::size_t max_bytes = 56;
  runtime* r;
  const entry_info* method;
  std::size_t size;
  alignas(8) char bytes[max_bytes];
};
void run_direct(void* p) {
  auto* d = static_cast<direct_invoke*>(p);
  const std::string_view bytes(d->bytes, d->size);
  try {
    const message m = read_message(bytes);
    array_at(m.h.array).on_invoke(m, bytes, d->method);
  } catch (...) {
    d->r->failure = std::current_exception();
  }
}

// Runs an invoke now, from the handler (see the top): true when it ran, or failed (the
// failure kept for run_until to throw); false when it must be queued.
bool run_now(runtime& r, std::string_view bytes) try {
  // A queued message is read once, by the scheduler: only the kind and entry are looked at.
  const std::uint64_t id = invoked_entry(bytes);
  if (id == 0) return false;
  const entry_info& method = entry(id);
  if (method.expedited) {
    const message m = read_message(bytes);
    if (array_state& a = array_at(m.h.array); !a.in_place()) {
      ++r.counts.expedited;
      count().expedited.add_from_one_thread();
      a.on_invoke(m, bytes, &method);
      return true;
    }
  }
  if (bytes.size() > direct_invoke::max_bytes) return false;
  direct_invoke d;  // its bytes are not zeroed first: they are copied over at once
  d.r = &r;
  d.method = &method;
  d.size = bytes.size();
  std::memcpy(d.bytes, bytes.data(), bytes.size());
  if (!am::run_unlocked_in_handler(run_direct, &d)) return false;
  ++r.counts.direct;
  count().direct.add_from_one_thread();
  return true;
} catch (...) {
  r.failure = std::current_exception();
  return true;
}

// Runs an invoke from the handler when the scheduler allows it; false: queue it.
bool run_in_handler(runtime& r, std::string_view bytes) {
  // Nothing may be waiting to run before it: a queue, or a batch the wait's predicate has
  // taken (the substrate may poll once more before the wait returns).
  if (!r.waiting || r.in_handler || !r.inbox.empty() || r.batch_at < r.batch.size() || !r.local.empty() ||
      r.failure || !r.deferred.empty()) {
    return false;
  }
  r.in_handler = true;
  const bool ran = run_now(r, bytes);
  r.in_handler = false;
  if (!ran) return false;
  ++r.counts.handled;
  count().handled.add_from_one_thread();
  r.ran_in_handler = true;
  return true;
}

// The substrate's handler: run it at once, or queue it for the scheduler. Only the
// scheduler's own thread looks at its state (another thread handling messages queues).
void on_message(am::token&, am::payload p) {
  runtime& r = rt();
  const std::string_view bytes(reinterpret_cast<const char*>(p.data()), p.size());
  if (std::this_thread::get_id() == r.scheduler_thread && run_in_handler(r, bytes)) return;
  append_framed(r.inbox, bytes);
}

// What a run in the handler could not send there, in the order it was sent.
void send_deferred(runtime& r) {
  for (auto& [node, msg] : std::exchange(r.deferred, {})) {
    const am::payload p(reinterpret_cast<const std::byte*>(msg.data()), msg.size());
    if (msg.size() <= am::max_payload()) {
      am::send<on_message>(node, p);
    } else {
      am::bulk_send<on_message>(node, p);
    }
  }
}

// Makes what the handlers queued the next batch. Under the node lock, the batch done.
void take_inbox(runtime& r) {
  r.batch.clear();
  r.batch_at = 0;
  r.batch.swap(r.inbox);
}

}  // namespace

// Runs the messages of the current batch, one at a time, until the batch is done or
// done() holds; then takes the next batch (what this node sent itself first, then, with
// `inbox`, what the handlers queued). The batch is only read while it runs, so the views
// into it stay valid while entry methods send. Returns false when there was nothing to run.
bool run_some(bool (*done)(void*), void* ctx, bool inbox) {
  runtime& r = rt();
  if (r.batch_at >= r.batch.size()) {
    if (!r.local.empty()) {
      r.batch.clear();
      r.batch_at = 0;
      r.batch.swap(r.local);
    } else {
      if (!inbox) return false;
      am::run_locked([&] { take_inbox(r); });
      if (r.batch.empty()) return false;
    }
  }
  while (r.batch_at < r.batch.size()) {
    std::uint32_t n = 0;
    std::memcpy(&n, r.batch.data() + r.batch_at, sizeof n);
    const std::string_view bytes(r.batch.data() + r.batch_at + sizeof n, n);
    r.batch_at += sizeof n + n;
    const message m = read_message(bytes);
    ++r.counts.handled;
    count().handled.add_from_one_thread();
    array_at(m.h.array).handle(m, bytes);
    if (done != nullptr && done(ctx)) break;
  }
  return true;
}

bool never(void*) { return false; }

void check_scheduler(const char* what) {
  runtime& r = rt();
  if (r.in_entry) {
    throw squall::usage_error(std::string("libarrays: ") + what +
                              " inside an entry method (entry methods must not wait: send a message instead)");
  }
  if (r.in_for_each) {  // the scheduler could delete the elements it visits
    throw squall::usage_error(std::string("libarrays: ") + what +
                              " inside for_each_local (it visits the elements where they are: wait after it)");
  }
  if (r.arrays.empty()) {  // no scheduler thread yet: saying "another thread" misled
    throw squall::usage_error(std::string("libarrays: ") + what +
                              " before this node created any array (a node's scheduler runs on the thread that "
                              "creates its first array: array<T>::create, collective)");
  }
  if (std::this_thread::get_id() != r.scheduler_thread) {
    throw squall::usage_error(std::string("libarrays: ") + what +
                              " from a thread other than the one that created the node's first array");
  }
}

runtime& make_runtime() {
  // Never destroyed: elements in place live in a segment the substrate unmaps at exit.
  static runtime& r = *[] {
    auto* x = new runtime;
    x->me = squall::node();
    x->nodes = squall::nodes();
    x->wait_notice_s = squall::wait_notice_seconds();
    the_runtime.store(x, std::memory_order_release);
    return x;
  }();
  return r;
}

void send(int node, const header& h, std::string_view key, std::string_view body) {
  runtime& r = rt();
  ++r.counts.sent;
  count().sent.add_from_one_thread();
  const std::size_t size = wire_header_bytes(h) + key.size() + body.size();
  // Written once, where it goes: this node's queue, or the outgoing packet.
  const auto write = [&](char* p) { write_message(p, h, key, body); };
  if (node == r.me) {
    const auto n = static_cast<std::uint32_t>(size);
    const std::size_t at = r.local.size();
    r.local.resize(at + sizeof n + size);
    std::memcpy(r.local.data() + at, &n, sizeof n);
    write(r.local.data() + at + sizeof n);
    return;
  }
  if (r.in_handler && (size > am::max_payload() || !r.deferred.empty())) {
    std::string msg(size, '\0');
    write(msg.data());
    r.deferred.emplace_back(node, std::move(msg));
    return;
  }
  if (size <= am::max_payload()) {
    am::send_written<on_message>(node, size, [&](std::byte* p) { write(reinterpret_cast<char*>(p)); });
  } else {
    // A large element or argument list: streamed, and complete here before msg goes.
    std::string msg(size, '\0');
    write(msg.data());
    am::bulk_send<on_message>(node, am::payload(reinterpret_cast<const std::byte*>(msg.data()), msg.size()));
  }
}

// run_until's loop; the wait also ends when wake(wake_ctx) holds (asked under the node lock:
// something done() waits for that is not a message of this layer's).
void run_until_woken(bool (*done)(void*), void* ctx, bool (*wake)(void*), void* wake_ctx) {
  runtime& r = rt();
  while (!done(ctx)) {
    if (run_some(done, ctx, /*inbox=*/false)) continue;
    // Idle: wait for the substrate's handler to queue something (or done to hold: only a
    // message can change it, so waiting for one is enough), and take it as the next batch
    // in the same hold of the node lock.
    r.waiting = true;
    r.ran_in_handler = false;
    am::wait_until([&] {
      if (r.ran_in_handler) return true;
      if (r.inbox.empty()) return wake != nullptr && wake(wake_ctx);
      take_inbox(r);
      return true;
    });
    r.waiting = false;
    send_deferred(r);
    if (r.failure) std::rethrow_exception(std::exchange(r.failure, nullptr));
  }
}

namespace {

// A wave's numbers summed over the nodes, this node's scheduler running meanwhile: a node
// still waiting on one of this node's elements is answered (squall::allreduce_sum). What the
// scheduler throws meanwhile goes to `failed`, and the sum goes on. `destroying` as
// quiesce_for's, for the notice.
template <std::size_t N>
std::array<std::uint64_t, N> sum_over_nodes(const std::array<std::uint64_t, N>& mine, std::exception_ptr& failed,
                                            std::uint64_t destroying) {
  runtime& r = rt();
  squall::allreduce_sum sum{std::span<const std::uint64_t>(mine)};
  const auto progress = [](void* s) { return static_cast<squall::allreduce_sum*>(s)->progress(); };
  const auto ready = [](void* s) { return static_cast<squall::allreduce_sum*>(s)->ready(); };
  // A node that never comes (it waits in a get(), or calls something else) is waited for:
  // past SQUALL_WAIT_NOTICE_S, said once.
  const std::int64_t due = r.wait_notice_s > 0 ? notice_due(r) : INT64_MAX;
  bool said = r.wait_notice_s == 0;
  while (!sum.progress()) {
    keeping_failure(failed, [&] {
      if (said) return run_until_woken(progress, &sum, ready, &sum);
      if (run_until_due(due, progress, &sum, ready, &sum)) return;
      said = true;
      ++r.counts.wait_notices;
      count().wait_notices.add_from_one_thread();
      const std::string in = destroying == 0 ? "quiesce() (or at_sync, checkpoint, restart)"
                                             : "array " + std::to_string(destroying - 1) + "'s destroy()";
      std::fprintf(stderr,
                   "squall: libarrays: node %d has waited %lld s in %s for the other nodes to reach it; still "
                   "waiting (every node must call it)\n",
                   r.me, static_cast<long long>(r.wait_notice_s), in.c_str());
    });
  }
  std::array<std::uint64_t, N> all{};
  std::copy(sum.result().begin(), sum.result().end(), all.begin());
  return all;
}

std::string what_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

// Collective, once a wave found that some node failed: every node throws, the lowest failing
// node's message reaching the others.
[[noreturn]] void fail_on_every_node(const std::exception_ptr& failed) {
  const int me = rt().me;
  const int first = squall::allreduce(failed ? me : INT_MAX, squall::op::min{});
  std::string text = me == first ? what_of(failed) : std::string();
  std::uint64_t length = text.size();
  squall::broadcast(length, first);
  text.resize(length);
  squall::broadcast(std::span<char>(text.data(), text.size()), first);
  if (failed) std::rethrow_exception(failed);
  throw node_failed(first, text);
}

// What a node quiesces for, in the waves' sums: x = 0 for quiesce(), the array's id + 1 for
// array::destroy(). The sums of x and x*x equal nodes*x and nodes*x*x only when every node's
// x is its own, so every node finds a disagreement alike and throws, in step. Unchecked, a
// destroy() on some nodes met a quiesce() on the others, and each node went on with its own
// idea of which arrays exist.
constexpr std::size_t destroyers = 3, sum_x = 4, sum_xx = 5;  // in a wave
void check_same_purpose(const std::array<std::uint64_t, 6>& wave, std::uint64_t x, int nodes) {
  const auto n = static_cast<std::uint64_t>(nodes);
  if (wave[sum_x] == n * x && wave[sum_xx] == n * x * x) return;
  if (wave[destroyers] < n) {
    throw squall::usage_error("libarrays: array::destroy() on " + std::to_string(wave[destroyers]) + " of " +
                              std::to_string(nodes) +
                              " nodes met quiesce() (or at_sync, checkpoint, restart) on the others; nothing was "
                              "destroyed: every node destroys the same arrays, in the same order");
  }
  throw squall::usage_error(
      "libarrays: array::destroy(): the nodes destroy different arrays at once; nothing was destroyed: every node "
      "destroys the same arrays, in the same order");
}
}  // namespace
}  // namespace detail

void run_until(bool (*done)(void*), void* ctx) {
  detail::check_scheduler("run_until (or a future's get)");
  detail::run_until_woken(done, ctx, nullptr, nullptr);
}

void quiesce() {
  detail::check_scheduler("quiesce");
  detail::quiesce_for(0);
}

// quiesce(), or array::destroy()'s of array `destroying` - 1 when that is not 0.
void detail::quiesce_for(std::uint64_t destroying) {
  detail::runtime& r = detail::rt();
  // Waves: each node runs until idle, then the job sums what was sent and handled. Two
  // waves in a row with equal sums, and as much handled as sent, mean nothing moved between
  // them, so nothing is in flight. The scheduler runs while a wave's sum is made: a node
  // that is not in quiesce yet, waiting on an element here (a future's get()), is answered
  // (a blocking sum left it waiting for ever).
  // Then requests held for elements that do not exist are answered with an error (their
  // futures throw), insertions held behind an element that exists are dropped and thrown on
  // every node (an index inserted twice), and the detection runs again for those answers. That last sum blocks:
  // every node is here by then, and what a node that has left sends waits in the queue,
  // so no message of after the quiescence runs in it.
  // A failure (an entry method's, a reduction's) is kept and counted in the next wave, which
  // then ends quiesce on every node.
  std::exception_ptr failed;
  std::string duplicate;  // the first insertion of an element that exists, found here
  std::array<std::uint64_t, 2> last{~0ULL, ~0ULL};
  for (;;) {
    detail::keeping_failure(failed, [] {
      while (detail::run_some(detail::never, nullptr, /*inbox=*/true)) {
      }
    });
    const std::array<std::uint64_t, 6> wave = detail::sum_over_nodes(
        std::array<std::uint64_t, 6>{r.counts.sent, r.counts.handled, failed ? 1u : 0u, destroying != 0 ? 1u : 0u,
                                     destroying, destroying * destroying},
        failed, destroying);
    if (wave[2] != 0) detail::fail_on_every_node(failed);
    detail::check_same_purpose(wave, destroying, r.nodes);
    const std::array<std::uint64_t, 2> all{wave[0], wave[1]};
    if (all[0] == all[1] && all == last) {
      std::array<std::uint64_t, 2> found{0, 0};  // failed requests; nodes with a duplicate
      for (detail::array_state* a : r.live) found[0] += a->settle_held(duplicate);
      found[1] = duplicate.empty() ? 0 : 1;
      squall::allreduce(std::span<const std::uint64_t>(found), std::span<std::uint64_t>(found));
      if (found[1] != 0 && found[0] == 0) detail::agree_on_problem(r, duplicate);
      if (found[0] == 0) break;
      last = {~0ULL, ~0ULL};
      continue;
    }
    last = all;
  }
  std::size_t held = 0;
  std::string first_held;
  for (detail::array_state* a : r.live) {
    a->trim_broadcasts();
    held += a->held_messages(first_held);
    const std::size_t expired = a->expire_caches();
    r.counts.cache_expired += expired;
    detail::count().cache_expired.add_from_one_thread(expired);
  }
  static stats::counter held_at_quiescence("arrays.held_at_quiescence");
  if (held != 0) {
    held_at_quiescence.add(held);
    std::fprintf(stderr,
                 "squall: libarrays: node %d holds %zu message(s) for elements that do not exist (sent to an "
                 "index never inserted, or deleted), the first for %s; each runs if its element is inserted\n",
                 r.me, held, first_held.c_str());
  }
}

node_failed::node_failed(int node, const std::string& what)
    : std::runtime_error("libarrays: quiesce: node " + std::to_string(node) + " failed: " + what), node_(node) {}

scheduler_counts counts() { return detail::rt().counts; }

}  // namespace squall::arrays
