// SPDX-License-Identifier: BSD-3-Clause
#include "runtime/node_lock.hpp"

#include "common/process_fence.hpp"
#include "stats/counters.hpp"

namespace squall::rt {
namespace {

#if defined(SQUALL_TSAN)
constexpr bool may_bias = false;  // ThreadSanitizer cannot see the membarrier's ordering
#else
constexpr bool may_bias = true;
#endif

constexpr std::int64_t rebias_after_ns = 1'000'000;
const int revocations_counted = stats::counter_slot("lock.bias_revocations");

}  // namespace

bool node_lock::bias_to_this_thread() {
  if (!may_bias || !process_fence::enable_private()) return false;
  candidate_ = self();
  bias_.store(candidate_, std::memory_order_relaxed);
  return true;
}

bool node_lock::revoke_bias(bool wait) {
  revoke_.store(true, std::memory_order_relaxed);
  process_fence::heavy_private();
  // From here the biased thread sees revoke_ on its next way in; wait until it is out.
  for (unsigned spins = 1; in_cs_.load(std::memory_order_acquire); ++spins) {
    if (!wait) return false;
    if ((spins & 255) == 0) {
      sched_yield();
    } else {
      cpu_relax();
    }
  }
  bias_.store(0, std::memory_order_relaxed);
  last_revocation_ns_ = now_ns();
  revocations_.store(revocations_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  stats::counter_at(revocations_counted).fetch_add(1, std::memory_order_relaxed);
  return true;
}

void node_lock::rebias(int me) {
  if (now_ns() - last_revocation_ns_ < rebias_after_ns) return;
  bias_.store(me, std::memory_order_relaxed);
  revoke_.store(false, std::memory_order_relaxed);
}

}  // namespace squall::rt
