// How a node waits: spin briefly while polling, then sleep on the node's doorbell, which
// a sender rings only when no thread of this node is polling. The progress thread serves
// handlers while the program computes, and sleeps whenever nothing arrives.
#include <sched.h>
#include <unistd.h>

#include <cstdio>

#include "common/futex.hpp"
#include "common/log.hpp"
#include "runtime/node.hpp"
#include "stats/counters.hpp"

namespace squall::rt {
namespace {

const int waits_slept = stats::counter_slot("wait.sleeps");
const int progress_wakeups = stats::counter_slot("progress.wakeups");
const int progress_polls = stats::counter_slot("progress.packets_handled");
const int timed_flushes = stats::counter_slot("progress.timed_flushes");

constexpr std::int64_t idle_timeout_ns = 100'000'000;   // re-check for a lost node this often
constexpr std::int64_t unsent_timeout_ns = 1'000'000;   // send aggregated leftovers this soon

// Sleeps on the doorbell unless `ready` says there is work. The caller counts as awake
// before and after. Dekker-style with the sender: we drop out of `awake` and then look at
// the rings; the sender publishes and then looks at `awake`.
template <class Ready>
void sleep_on_doorbell(node_runtime& nd, Ready&& ready) {
  auto& ctl = nd.control();
  const std::uint32_t seen = ctl.doorbell.load(std::memory_order_seq_cst);
  ctl.sleepers.fetch_add(1, std::memory_order_seq_cst);
  ctl.awake.fetch_sub(1, std::memory_order_seq_cst);
  if (!ready() && !nd.stopping.load()) {
    const bool unsent = nd.engine->has_unsent();
    futex_wait(&ctl.doorbell, seen, unsent ? unsent_timeout_ns : idle_timeout_ns);
  }
  ctl.awake.fetch_add(1, std::memory_order_seq_cst);
  ctl.sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

void progress_loop(node_runtime& nd) {
  auto& ctl = nd.control();
  ctl.awake.fetch_add(1, std::memory_order_seq_cst);
  std::int64_t last_work = 0;  // sleep at once: nothing has happened yet
  while (!nd.stopping.load(std::memory_order_relaxed)) {
    std::size_t handled = 0;
    if (nd.lock.try_lock()) {
      handled = nd.engine->poll();
      nd.lock.unlock();
    }
    if (handled != 0) {
      stats::bump(stats::counter_at(progress_polls), handled);
      last_work = now_ns();
      // A compute thread asleep in a wait may be waiting for what we just handled.
      if (nd.compute_sleeping.load(std::memory_order_seq_cst)) {
        ctl.doorbell.fetch_add(1);
        futex_wake_all(&ctl.doorbell);
      }
      continue;
    }
    nd.check_abort();
    if (now_ns() - last_work < nd.config.progress_spin_ns) {
      cpu_relax();
      continue;
    }
    const std::uint32_t rung = ctl.doorbell.load();
    sleep_on_doorbell(nd, [&] {
      if (!nd.lock.try_lock()) return false;  // someone else is polling
      const bool work = nd.transport->any_incoming();
      nd.lock.unlock();
      return work;
    });
    stats::counter_at(progress_wakeups).fetch_add(1, std::memory_order_relaxed);
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
  if (h.abort.load(std::memory_order_relaxed) == 0) return;
  static std::atomic<bool> reported{false};
  if (!reported.exchange(true)) {
    fatal("node %d was lost (%s); exiting", h.lost_node.load(), h.reason);
  }
  for (;;) pause();  // another thread is reporting and exiting
}

void wait_until(node_runtime& nd, bool (*pred)(void*), void* ctx) {
  if (am::engine::in_handler()) {
    fatal("a handler tried to wait (am::call, wait_until, a collective, or a bulk completion); "
          "handlers may only send - reply with a message instead");
  }
  auto& ctl = nd.control();
  locked(nd, [&] { nd.engine->flush_all(); });  // what we wait for may depend on it
  bool worked = false;
  auto poll_and_test = [&] {
    std::lock_guard g(nd.lock);
    if (nd.engine->poll() != 0) worked = true;
    return pred(ctx);
  };
  ctl.awake.fetch_add(1, std::memory_order_seq_cst);
  std::int64_t spin_until = now_ns() + nd.config.wait_spin_ns;
  while (!poll_and_test()) {
    // Spin without the lock until a packet arrives, another thread runs handlers, or a
    // queued packet may find room. The clock (and a lost node) is looked at every 64 turns.
    const std::uint64_t epoch = nd.engine->handled_epoch();
    bool sleep = false;
    for (unsigned spins = 1; !nd.transport->any_incoming() && nd.engine->handled_epoch() == epoch &&
                             !nd.engine->has_unsent();
         ++spins) {
      cpu_relax();
      if ((spins & 63) != 0) continue;
      nd.check_abort();
      const std::int64_t now = now_ns();
      if (worked) {
        spin_until = now + nd.config.wait_spin_ns;
        worked = false;
      }
      if (now >= spin_until) {
        sleep = true;
        break;
      }
      if (nd.config.oversubscribed) sched_yield();
    }
    if (!sleep) continue;
    stats::counter_at(waits_slept).fetch_add(1, std::memory_order_relaxed);
    nd.compute_sleeping.store(true, std::memory_order_seq_cst);
    sleep_on_doorbell(nd, [&] {
      std::lock_guard g(nd.lock);
      return nd.transport->any_incoming() || pred(ctx);
    });
    nd.compute_sleeping.store(false, std::memory_order_relaxed);
    spin_until = now_ns() + nd.config.wait_spin_ns;
  }
  ctl.awake.fetch_sub(1, std::memory_order_seq_cst);
  // Messages whose senders saw us awake and did not ring: handle them now.
  std::lock_guard g(nd.lock);
  nd.engine->poll();
}

void start_progress_thread(node_runtime& nd) {
  if (!nd.config.progress_thread) return;
  nd.progress = std::thread([&nd] { progress_loop(nd); });
}

void stop_progress_thread(node_runtime& nd) {
  if (!nd.progress.joinable()) return;
  nd.stopping.store(true);
  nd.control().doorbell.fetch_add(1);
  futex_wake_all(&nd.control().doorbell);
  nd.progress.join();
}

}  // namespace squall::rt
