// SPDX-License-Identifier: BSD-3-Clause
// How a node waits: spin briefly while polling, then sleep on the node's doorbell, which
// a sender rings only when no thread of this node is polling (`awake` is zero). The
// progress thread serves handlers while the program computes, and sleeps whenever nothing
// arrives.
//
// Lingering: a thread leaving a wait does not drop out of `awake` at once. Senders read
// `awake` on every packet, so writing it on every wait would cost them a cache miss each
// (in a ping-pong, a third of the round trip). Instead the leaver stays counted, and the
// progress thread, which then sleeps only for the linger period, drops it out when no new
// wait began in that period, and polls once for what arrived meanwhile. A message that
// arrives just after the program left a wait to compute thus waits for the progress
// thread's next look: the linger period (50 us, about what a doorbell's wake-up costs
// here), or up to a millisecond when the program had been cycling through many short waits,
// and later still when the program's computing holds the core the progress thread needs.
//
// Nudges: a wait that has had no answer for 20 us (nudge_after_ns) therefore wakes the peers
// that linger and have not taken its packets (transport::nudge_peers; whether a node lingers
// is published on a line of its own, which only such a waiter reads). Woken so, the progress
// thread serves and goes back to watching, leaving the program counted as polling. Measured
// on 2 nodes (bench/tsm/README.md, tsm_jacobi): a 2-D Jacobi, whose boundary misses waited up
// to 4 ms each for a lingering home, took 0.84 of the time with nudges after the linger
// period (50 us), and 0.87 of that after 20 us; nudging after 15 us every peer with
// unanswered packets, lingering or not, made RADIX and n-body 1.2-1.3x slower (wake-ups for
// nothing). Spinning on after a nudge rather than sleeping made n-body 1.15x slower (its
// lock holders ran side by side, and its read misses tripled).
//
// Pokes: a wait about to sleep with packets that a peer of this host has still not taken
// pokes that peer if its main thread runs (transport::poke_stalled_peers, common/poke.hpp):
// the peer's program yields its processor to the peer's progress thread, which the doorbell
// or the nudge has woken but the scheduler may leave queued for milliseconds. Against the
// library without them (2 nodes, alternated runs): the Jacobi of bench/tsm 0.88 of the time,
// its misses over 0.5 ms 3-8 a run -> none, its fault handling 20 -> 10 ms (medians of 8);
// PARMACS SOR 0.79, LU, radix and FFT unchanged, n-body 1.0-1.07 (its lock holders collide
// more when served sooner). Poking only after a further 200 us asleep kept n-body at 0.98
// but SOR at 0.86 and 3-5 of the Jacobi's long misses.
// Who a ring wakes: the program threads asleep in a wait, when any are (they poll for the
// node once woken), else every sleeper, the progress thread among them (futex bit sets,
// shm::doorbell_wakes). Woken beside a program thread, the progress thread would run first
// on the core binding gives them both - serve, ring the waiter, and fence its way back to
// sleep - while the program waited: 40-50 us per wake-up in CHAOS's exchanges. And a
// sender's quiet messages (am::quiet_sends) wake only program threads in a wait: not the
// progress thread of a node whose program computes, which would take the program's core to
// make a delivery that the program makes itself in its next wait. Unstructured's CHAOS
// version on 2 nodes (shared memory, the paper's mesh, medians of 9 alternated runs): 0.70
// of its time before both, 0.88 of Open MPI's instead of 1.25-2.2.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "common/futex.hpp"
#include "common/log.hpp"
#include "common/process_fence.hpp"
#include "common/runtime_thread.hpp"
#include "runtime/node.hpp"
#include "runtime/wait_yields.hpp"
#include "stats/counters.hpp"

namespace squall::rt {
namespace {

// Waits that went to sleep on the doorbell; not those that, about to, found what they waited
// for (a transfer's completion that their own polling brought in as their spin ran out).
const int waits_slept = stats::counter_slot("wait.sleeps");
const int progress_wakeups = stats::counter_slot("progress.wakeups");
const int progress_yields = stats::counter_slot("progress.yields");  // watching with nodes > cores
const int progress_polls = stats::counter_slot("progress.packets_handled");
const int timed_flushes = stats::counter_slot("progress.timed_flushes");
const int progress_lock_busy = stats::counter_slot("progress.lock_busy");  // work, but the node lock was taken
const int io_thread_handled = stats::counter_slot("progress.handled_by_io_thread");  // serve_arrivals

constexpr std::int64_t idle_timeout_ns = 100'000'000;   // re-check for a lost node this often
constexpr std::int64_t unsent_timeout_ns = 1'000'000;   // send aggregated leftovers this soon
constexpr std::int64_t max_watch_ns = 1'000'000;        // longest look-away from a lingering thread
// A wait unanswered this long nudges the peers that linger (at most the linger period). A
// polling peer answers a miss in under 10 us; a lingering one that computes needs a nudge,
// and then about an IPI (15-25 us here) more.
constexpr std::int64_t nudge_after_ns = 20'000;

// Sleeps on the doorbell unless `ready` says there is work; true if it slept. The caller
// counts as awake before and after. Dekker-style with the sender: we drop out of `awake` and
// then look at the rings; the sender publishes and then looks at `awake`.
template <class Ready>
bool sleep_on_doorbell(node_runtime& nd, shm::doorbell_sleeper who, std::int64_t timeout_ns, Ready&& ready) {
  auto& ctl = nd.control();
  const std::uint32_t seen = ctl.doorbell.load(std::memory_order_seq_cst);
  if (who == shm::program_waiter) ctl.waiters_asleep.fetch_add(1, std::memory_order_seq_cst);
  ctl.sleepers.fetch_add(1, std::memory_order_seq_cst);
  // The network's I/O thread watches while nobody of this node polls: it is handed the
  // watch when the last poller sleeps, and steps aside when the first polls again. Waking it
  // at every sleep, with the program thread still polling, only woke it to park again (2,000
  // times a second in a ping-pong over UCX, each on the program's processor).
  if (ctl.awake.fetch_sub(1, std::memory_order_seq_cst) == 1) nd.transport->node_sleeps();
  if (nd.engine->has_unsent()) timeout_ns = std::min(timeout_ns, unsent_timeout_ns);
  const std::int64_t deadline = nd.engine->next_deadline();  // a deferred call (am::call_at)
  if (deadline != INT64_MAX) timeout_ns = std::min(timeout_ns, std::max<std::int64_t>(deadline - now_ns(), 0));
  // Senders publish with a light fence (common/process_fence.hpp); a look that only
  // passes through the kernel (no time to sleep) needs no heavy one.
  if (timeout_ns > 0) process_fence::heavy();
  const bool sleeps = !ready() && !nd.stopping.load();
  if (sleeps) futex_wait_class(&ctl.doorbell, seen, timeout_ns, who);
  if (ctl.awake.fetch_add(1, std::memory_order_seq_cst) == 0) nd.transport->node_polls();
  ctl.sleepers.fetch_sub(1, std::memory_order_seq_cst);
  if (who == shm::program_waiter) ctl.waiters_asleep.fetch_sub(1, std::memory_order_seq_cst);
  return sleeps;
}

// Sets the program's presence (node_runtime::compute, under the node lock). The shared
// `lingering` line mirrors whether it lingers, for late waiters in other nodes (nudges); it
// is written only when that changes, so a wait entered from computing writes nothing more.
// With more nodes than processors the line also says whether the program computes, for
// yielders (wait_yields.cpp).
void set_compute(node_runtime& nd, int state) {
  const int was = nd.compute.load(std::memory_order_relaxed);
  const bool lingered = was == node_runtime::lingering;
  const bool lingers = state == node_runtime::lingering;
  nd.compute.store(state, std::memory_order_relaxed);
  if (lingered != lingers) nd.control().lingering.store(lingers ? 1 : 0, std::memory_order_relaxed);
  const bool computes = state == node_runtime::away;
  if (nd.config.oversubscribed && (was == node_runtime::away) != computes) {
    nd.control().computed_until_ns.store(computes ? INT64_MAX : now_ns(), std::memory_order_relaxed);
  }
}

// Drops a lingering program thread out of `awake`, then polls for what arrived while it
// counted as polling without being so. The program's presence changes under the node lock
// (enter_wait, leave_wait).
bool end_lingering(node_runtime& nd) {
  // Looked at first without the lock: taking it from a program thread in a long wait would
  // cost that thread the lock's bias (node_lock.hpp) for nothing.
  if (nd.compute.load(std::memory_order_relaxed) != node_runtime::lingering) return false;
  std::lock_guard g(nd.lock);
  if (nd.compute.load(std::memory_order_relaxed) != node_runtime::lingering) return false;
  set_compute(nd, node_runtime::away);
  nd.control().awake.fetch_sub(1, std::memory_order_seq_cst);
  nd.engine->poll();
  return true;
}

// Whether polling now would do anything: packets arrived, packets wait to be sent, or a
// deferred call is due. Asked without the node lock.
bool has_work(node_runtime& nd) {
  return nd.transport->any_incoming() || nd.engine->has_unsent() || nd.engine->next_deadline() <= now_ns();
}

// True while a program thread spins in a wait: it polls for the node, and the progress
// thread keeps out of its way (two pollers only fight over the lock).
bool program_polls(const node_runtime& nd) {
  return nd.compute.load() == node_runtime::waiting && nd.waiters.load() > nd.sleeping_waiters.load();
}

// The progress thread of a job of one node: everything that arrives was sent by the
// node's own threads, which ring when none of them polls (they do not linger here,
// runtime.cpp), so it sleeps until rung or until a deferred call is due, and then serves.
// Watching the program's waits as below woke it every 80 us or so on the cores two PARMACS
// workers computed on (SOR on one node of two threads: 0.30 s against 0.21 s on pthreads).
void serve_alone(node_runtime& nd) {
  auto& ctl = nd.control();
  ctl.awake.fetch_add(1, std::memory_order_seq_cst);
  while (!nd.stopping.load(std::memory_order_relaxed)) {
    // Waits linger only when SQUALL_LINGER_US asks for it here: then this thread ends it.
    const bool lingering = nd.compute.load(std::memory_order_relaxed) == node_runtime::lingering;
    const std::uint32_t rung = ctl.doorbell.load();
    sleep_on_doorbell(nd, shm::progress_thread, lingering ? nd.config.linger_ns : idle_timeout_ns,
                      [&] { return nd.engine->next_deadline() <= now_ns(); });
    stats::counter_at(progress_wakeups).fetch_add(1, std::memory_order_relaxed);
    if (nd.stopping.load(std::memory_order_relaxed)) break;
    nd.check_abort();
    if (lingering) end_lingering(nd);
    std::lock_guard g(nd.lock);
    const std::size_t handled = nd.engine->poll();
    if (handled != 0) stats::bump(stats::counter_at(progress_polls), handled);
    // Woken by the timeout rather than a doorbell: send what aggregation left behind.
    if (ctl.doorbell.load() == rung && nd.engine->has_unsent()) {
      stats::counter_at(timed_flushes).fetch_add(1, std::memory_order_relaxed);
      nd.engine->flush_all();
    }
  }
  ctl.awake.fetch_sub(1, std::memory_order_seq_cst);
}

void progress_loop(node_runtime& nd) {
  if (nd.n == 1) {
    serve_alone(nd);
    return;
  }
  auto& ctl = nd.control();
  ctl.awake.fetch_add(1, std::memory_order_seq_cst);
  std::int64_t last_work = 0;  // sleep at once: nothing has happened yet
  // How long to sleep while watching a program thread that waits or lingers: the linger
  // period, doubled each time the program came back to wait on its own (up to a cap), so a
  // program cycling through short waits does not wake this thread 20,000 times a second.
  // With lingering off (nodes outnumber cores) this starts, and stays, at 0: the thread does
  // not sleep while a program waits, since a 20 us floor made fault-handler requests 2-30x
  // slower on 4 and 8 nodes; it gives its core away (sched_yield) instead. It used to pass
  // through zero-timeout futex waits, which kept the core: on 4 nodes / 2 cores that made a
  // CHAOS exchange 3.5x slower (52 -> 14 us) and the PARMACS n-body on 8 nodes 2x slower.
  std::int64_t watch_ns = nd.config.linger_ns;
  unsigned failed_tries = 0;  // of the node lock
  while (!nd.stopping.load(std::memory_order_relaxed)) {
    std::size_t handled = 0;
    // A lingering program thread is back soon: step in only for work, so as not to take
    // the lock from it for nothing (node_lock.hpp: taking it from that thread is dear).
    const bool lingering = nd.compute.load(std::memory_order_relaxed) == node_runtime::lingering;
    if (!program_polls(nd) && (!lingering || has_work(nd))) {
      if (nd.lock.try_lock()) {
        handled = nd.engine->poll();
        nd.lock.unlock();
      } else {
        // The holder is a program thread of this node, bound to this thread's processor:
        // preempted while it sends, it cannot let go while this thread spins (n-body on 2
        // nodes: 2 million failed tries, lock held across scheduler ticks). Now and then the
        // core goes to it. Not at every failure: yielding and retrying at once each time made
        // a miss served by this thread wait for the computing thread's slice in most runs
        // (tsm_busy_home 21 -> 120 us; a yield moves the yielder's virtual time on, so it no
        // longer preempts on its next wake-up).
        stats::counter_at(progress_lock_busy).fetch_add(1, std::memory_order_relaxed);
        if ((++failed_tries & 255) == 0) sched_yield();
      }
    }
    if (handled != 0) {
      stats::bump(stats::counter_at(progress_polls), handled);
      last_work = now_ns();
      continue;
    }
    nd.check_abort();
    if (!program_polls(nd) && now_ns() - last_work < nd.config.progress_spin_ns) {
      cpu_relax();
      continue;
    }
    const std::uint32_t rung = ctl.doorbell.load();
    const std::uint64_t waits = nd.waits_entered.load();
    const bool watch = nd.compute.load() == node_runtime::lingering || program_polls(nd);
    // Nothing to watch but packets already in: the try above found the node lock taken by a
    // program thread, which will handle them or let go soon. Through the sleep protocol
    // (a heavy fence, the network handed to the I/O thread and back) that cost more than
    // the wait: 13,000 such turns a run of a ping-pong over UCX.
    if ((watch && watch_ns == 0) || (!watch && nd.transport->any_queued())) {
      stats::counter_at(progress_yields).fetch_add(1, std::memory_order_relaxed);
      sched_yield();
      continue;
    }
    sleep_on_doorbell(nd, shm::progress_thread, watch ? watch_ns : idle_timeout_ns, [&] {
      // Else someone else polls. Not the network itself: that would fight a program thread
      // sending there for the transport's locks; the I/O thread watches it once we sleep.
      return !program_polls(nd) && nd.transport->any_queued();
    });
    stats::counter_at(progress_wakeups).fetch_add(1, std::memory_order_relaxed);
    if (watch && ctl.doorbell.load() != rung) {
      // Nudged by a waiter whose reply is late: serve it, and keep the program lingering -
      // ending that here would make every later sender ring.
      if (!program_polls(nd) && nd.lock.try_lock()) {
        handled = nd.engine->poll();
        nd.lock.unlock();
        if (handled != 0) stats::bump(stats::counter_at(progress_polls), handled);
      }
      continue;
    }
    if (watch) {
      // Back to short looks once the program left for good; otherwise (it came back to
      // wait, or is still in the same wait) look less often.
      const bool left = nd.waits_entered.load() == waits && end_lingering(nd);
      watch_ns = left ? nd.config.linger_ns : std::min(2 * watch_ns, max_watch_ns);
    }
    // Woken by the timeout rather than a doorbell: send what aggregation left behind.
    if (ctl.doorbell.load() == rung && nd.engine->has_unsent() && nd.lock.try_lock()) {
      stats::counter_at(timed_flushes).fetch_add(1, std::memory_order_relaxed);
      nd.engine->flush_all();
      nd.lock.unlock();
    }
    last_work = now_ns();
  }
  ctl.awake.fetch_sub(1, std::memory_order_seq_cst);
}

}  // namespace

void node_runtime::check_abort() const {
  const auto& h = job.header();
  if (h.abort.load(std::memory_order_relaxed) == shm::not_aborted) return;
  static std::atomic<bool> reported{false};
  if (!reported.exchange(true)) {
    if (h.abort.load() == shm::node_unresponsive) fatal("node %d %s; exiting", h.lost_node.load(), h.reason);
    fatal("node %d was lost (%s); exiting", h.lost_node.load(), h.reason);
  }
  for (;;) pause();  // another thread is reporting and exiting
}

// A program thread's presence (node_runtime::compute, waiters) changes under the node lock,
// which orders it with the progress thread's end_lingering; so plain loads and stores do,
// and the lock's bias (node_lock.hpp) spares the runtime's thread the locked instructions
// that a round trip of small messages would otherwise wait on.
void enter_wait(node_runtime& nd) {
  // Only "did it change" matters to the progress thread.
  nd.waits_entered.store(nd.waits_entered.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  nd.waiters.store(nd.waiters.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  const int was = nd.compute.load(std::memory_order_relaxed);
  set_compute(nd, node_runtime::waiting);
  if (was != node_runtime::lingering && nd.control().awake.fetch_add(1, std::memory_order_seq_cst) == 0) {
    nd.transport->node_polls();
  }
}

// Returns true when the caller stays counted as polling (lingering): the last waiter out
// lingers, unless it slept (the progress thread may be in a long sleep, and this wait
// already paid for system calls).
bool leave_wait(node_runtime& nd, bool slept) {
  const int waiters = nd.waiters.load(std::memory_order_relaxed) - 1;
  nd.waiters.store(waiters, std::memory_order_relaxed);
  if (waiters != 0) {
    nd.control().awake.fetch_sub(1, std::memory_order_seq_cst);
    return false;
  }
  if (!slept && nd.config.linger_ns > 0 && nd.progress.joinable()) {
    set_compute(nd, node_runtime::lingering);
    return true;
  }
  set_compute(nd, node_runtime::away);
  nd.control().awake.fetch_sub(1, std::memory_order_seq_cst);
  return false;
}

namespace {
// Whether this thread is counted in a wait of wait_until's (between its enter_wait and
// leave_wait), so that a handler its poll runs may step out of it (step_out_of_wait).
thread_local bool this_thread_waits = false;
}  // namespace

bool can_step_out_of_wait(const node_runtime& nd) { return this_thread_waits && nd.lock.held_once_by_this_thread(); }

void step_out_of_wait(node_runtime& nd, void (*f)(void*), void* ctx) {
  leave_wait(nd, /*slept=*/false);
  this_thread_waits = false;
  nd.lock.unlock();
  f(ctx);
  nd.lock.lock();
  enter_wait(nd);
  this_thread_waits = true;
}

void wait_until(node_runtime& nd, bool (*pred)(void*), void* ctx) {
  if (am::engine::in_handler()) {
    fatal("a handler tried to wait (am::call, wait_until, a collective, or a bulk completion); "
          "handlers may only send - reply with a message instead");
  }
  const bool outer_waits = this_thread_waits;  // a wait inside a stepped-out function
  {
    std::lock_guard g(nd.lock);
    if (nd.engine->has_unsent()) nd.engine->flush_all();  // we may wait on it
    enter_wait(nd);
    this_thread_waits = true;
  }
  bool slept = false;
  bool worked = false;
  auto poll_and_test = [&] {
    std::lock_guard g(nd.lock);
    // Another program thread's send may have left a packet partly filled (aggregation):
    // it goes now, as this thread's own did when the wait began.
    if (nd.engine->has_unsent()) nd.engine->flush_all();
    bool satisfied = false;
    if (nd.engine->poll_until(pred, ctx, satisfied) != 0) worked = true;
    return satisfied;
  };
  // The spin period starts at the first look at the clock: a short wait never reads it.
  std::int64_t spin_until = 0;
  std::int64_t nudge_at = 0;  // 0: not yet set; INT64_MAX: nudged
  bool poked = false;  // once a wait

  auto nudge = [&] {
    std::lock_guard g(nd.lock);
    nd.transport->nudge_peers();
    nudge_at = INT64_MAX;
  };
  while (!poll_and_test()) {
    // Spin without the lock until a packet arrives, another thread runs handlers, or a
    // queued packet may find room or a deferred call falls due. The clock (and a lost node)
    // is looked at every 64 turns.
    const std::uint64_t epoch = nd.engine->handled_epoch();
    bool sleep = false;
    bool satisfied_by_mail = false;
    // A mailbox packet is handled at once, here: a request's reply then leaves within a few
    // tens of nanoseconds of the request being seen (am/engine.hpp, the mailbox lane).
    auto handle_mail = [&] {
      std::lock_guard g(nd.lock);
      satisfied_by_mail = nd.engine->poll_mail(pred, ctx);
      worked = true;
      return true;
    };
    // Unsent packets are retried at once, unless the transport refused them all last time: it
    // rings the node when it has room.
    for (unsigned spins = 1; !(nd.engine->mail_waiting() && handle_mail()) && !nd.engine->worth_polling() &&
                             nd.engine->handled_epoch() == epoch &&
                             !(nd.engine->has_unsent() && !nd.engine->sends_stalled());
         ++spins) {
      cpu_relax();
      if ((spins & 63) != 0) continue;
      nd.check_abort();
      const std::int64_t now = now_ns();
      // Data on the move through this node's progress (transport::moving_data) counts as
      // work: sleeping would leave it to wake-ups, a socket buffer at a time.
      if (worked || spin_until == 0 || nd.transport->moving_data()) {
        spin_until = now + nd.config.wait_spin_ns;
        worked = false;
      }
      if (nudge_at == 0) nudge_at = nd.config.linger_ns > 0 ? now + std::min(nd.config.linger_ns, nudge_after_ns) : INT64_MAX;
      if (now >= nudge_at) nudge();
      if (now >= spin_until) {
        sleep = true;
        break;
      }
      if (now >= nd.engine->next_deadline()) break;  // a deferred call is due: poll runs it
      if (nd.config.oversubscribed) yield_in_wait(nd, now);
    }
    if (satisfied_by_mail) break;
    if (!sleep) continue;
    if (nudge_at != INT64_MAX) nudge();
    slept = true;
    // pred may consume what it waits for (a collective takes its message out of the
    // inbox), so a true answer here ends the wait: it must not be asked again. Another
    // thread that handles messages asks it too while this one sleeps (wake_sleeping_waiters).
    node_runtime::sleeping_wait self{pred, ctx, false, nullptr};
    {
      std::lock_guard g(nd.lock);
      self.next = nd.sleeping;
      nd.sleeping = &self;
      nd.sleeping_waiters.fetch_add(1, std::memory_order_seq_cst);
    }
    // A fault handler waits holding the node lock (memory/fault_service.cpp); it lets go
    // while asleep, so that the progress thread can serve meanwhile - otherwise that thread
    // would count as awake without being able to poll, and senders would not ring.
    const int levels = nd.lock.release_all();
    auto ready = [&] {
      std::lock_guard g(nd.lock);
      if (!self.satisfied) self.satisfied = pred(ctx);
      return self.satisfied || nd.transport->any_incoming();
    };
    if (nd.config.poke && !poked && !ready()) {
      poked = true;
      std::lock_guard g(nd.lock);
      nd.transport->poke_stalled_peers();
    }
    if (sleep_on_doorbell(nd, shm::program_waiter, idle_timeout_ns, ready)) {
      stats::counter_at(waits_slept).fetch_add(1, std::memory_order_relaxed);
    }
    nd.lock.restore(levels);
    {
      std::lock_guard g(nd.lock);
      node_runtime::sleeping_wait** at = &nd.sleeping;
      while (*at != &self) at = &(*at)->next;
      *at = self.next;
      nd.sleeping_waiters.fetch_sub(1, std::memory_order_relaxed);
    }
    if (self.satisfied) break;
    spin_until = 0;
  }
  std::lock_guard g(nd.lock);
  this_thread_waits = outer_waits;
  if (leave_wait(nd, slept)) return;
  // Messages whose senders saw us awake and did not ring: handle them now.
  nd.engine->poll();
}

bool serve_arrivals(node_runtime& nd) {
  // A thread of the node that polls handles them itself: taking the lock from under it would
  // cost it the lock's bias (a TCP ping-pong 10-20 -> 21-33 us a round trip).
  // Before the engine runs (and after finalize), waking the node is all there is to do.
  if (running_node.load(std::memory_order_acquire) != &nd || nd.control().awake.load(std::memory_order_seq_cst) != 0) {
    return false;
  }
  if (!nd.lock.try_lock()) return false;
  const std::size_t handled = nd.engine->poll();
  nd.lock.unlock();
  if (handled != 0) stats::counter_at(io_thread_handled).fetch_add(handled, std::memory_order_relaxed);
  return true;
}

void wake_sleeping_waiters(node_runtime& nd) {
  if (nd.sleeping_waiters.load(std::memory_order_relaxed) == 0) return;
  bool any = false;
  for (node_runtime::sleeping_wait* w = nd.sleeping; w != nullptr; w = w->next) {
    if (!w->satisfied && w->pred(w->ctx)) any = w->satisfied = true;
  }
  if (!any) return;
  nd.control().doorbell.fetch_add(1);
  futex_wake_all(&nd.control().doorbell);
}

void start_progress_thread(node_runtime& nd) {
  if (!nd.config.progress_thread) return;
  nd.progress = start_runtime_thread("squall-progress", [&nd] { progress_loop(nd); });
}

void stop_progress_thread(node_runtime& nd) {
  if (!nd.progress.joinable()) return;
  nd.stopping.store(true);
  nd.control().doorbell.fetch_add(1);
  futex_wake_all(&nd.control().doorbell);
  nd.progress.join();
  std::lock_guard g(nd.lock);
  if (nd.compute.load(std::memory_order_relaxed) == node_runtime::lingering) {
    set_compute(nd, node_runtime::away);
    nd.control().awake.fetch_sub(1, std::memory_order_seq_cst);
  }
}

}  // namespace squall::rt
