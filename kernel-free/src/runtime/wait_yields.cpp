// SPDX-License-Identifier: BSD-3-Clause
// With more nodes than processors a spinning wait (waiting.cpp) yields its processor now and
// then, so that the node it waits for, queued on the same processor, answers at once. On 8
// nodes of 2 cores the lock test of tsm_test (Locks.FenceWaitsForEveryRelease) takes 1.5 s so,
// 3.2 s with waits that never yield, and the PARMACS n-body 0.52-0.57 s against 1.5 s. That
// holds while the threads a yield hands the processor to are this job's, which answer and yield
// or sleep again. A program of another job that computes there keeps it for its whole scheduler
// slice instead (a yield moves the yielder's deadline a slice on): beside two busy loops the
// same lock test took 98-129 s, the n-body 22 s, a CHAOS exchange on 4 nodes 1.0-1.3 ms against
// 25 us. So a yield that took a slice (yield_backoff::long_yield_ns) while no other node of
// this host computed (node_control::computed_until_ns), or the third in a short while (another
// job beside this job's computing nodes), stops the thread's yields for a period that doubles
// while the other job stays (common/yield_backoff.hpp, which pokes use too): its waits spin
// their 5 us and sleep on the doorbell, as waits with a core each do.
// Beside the busy loops: the lock test 7.3-8.0 s, the n-body 5.0-6.1 s, the exchange 27-100 us
// (7-8 s and 4.4 s with waits that never yield); alone, the same as before within the noise (5
// alternated runs each).
#include "runtime/wait_yields.hpp"

#include <sched.h>

#include "common/futex.hpp"
#include "common/yield_backoff.hpp"
#include "stats/counters.hpp"

namespace squall::rt {
namespace {

const int wait_yields = stats::counter_slot("wait.yields");
const int foreign_yields = stats::counter_slot("wait.foreign_yields");  // taken for another program's

// A long yield while no other node of this host computed, or the third within 30 ms (another
// program beside this job's computing nodes), was taken by another program.
constexpr std::int64_t long_yields_window_ns = 30'000'000;
constexpr int long_yields_for_another_job = 3;

// Whether a node of this host other than this one ran its program outside a wait at some
// time since `since` (ns).
bool host_peer_computed_since(const node_runtime& nd, std::int64_t since) {
  for (int k = 0; k < nd.n; ++k) {
    if (k == nd.me || !nd.on_this_host[static_cast<std::size_t>(k)]) continue;
    if (nd.job.control(k).computed_until_ns.load(std::memory_order_relaxed) >= since) return true;
  }
  return false;
}

}  // namespace

void yield_in_wait(const node_runtime& nd, std::int64_t now) {
  thread_local yield_backoff backoff;
  thread_local std::int64_t window_start = 0;  // of the recent long yields
  thread_local int long_yields = 0;
  if (!backoff.may_yield(now)) return;
  stats::counter_at(wait_yields).fetch_add(1, std::memory_order_relaxed);
  sched_yield();
  const std::int64_t back = now_ns();
  if (back - now <= yield_backoff::long_yield_ns) return;
  if (back - window_start > long_yields_window_ns) {
    window_start = back;
    long_yields = 0;
  }
  if (++long_yields >= long_yields_for_another_job || !host_peer_computed_since(nd, now)) {
    stats::counter_at(foreign_yields).fetch_add(1, std::memory_order_relaxed);
    backoff.start(back);
    long_yields = 0;
  }
}

}  // namespace squall::rt
