// SPDX-License-Identifier: BSD-3-Clause
// Periods without yields, for a thread whose yields went to another program's busy threads.
// Beside such a thread a sched_yield gives the processor away for that thread's whole
// scheduler slice and moves the yielder's deadline a slice on (EEVDF), so the yielder runs
// later instead of this job's threads running sooner. Used by a spinning wait's yields
// (runtime/wait_yields.cpp) and by a poke's (common/poke.cpp), which each say how they tell.
#pragma once
#include <algorithm>
#include <cstdint>

namespace squall {

struct yield_backoff {
  // A yield that took longer than this went to a thread that computed for a scheduler slice
  // (about 3 ms here). Of the yields over 0.25 ms, beside busy loops 81% took over 2.5 ms
  // (tsm_test's lock test on 8 nodes); among one job's nodes alone 90% took under 1 ms (the
  // PARMACS n-body).
  static constexpr std::int64_t long_yield_ns = 1'500'000;
  // A period lasts 20 ms at first and doubles, up to 1.6 s, while the other program is found
  // again soon after the last one ended (beside two busy loops the n-body took 5.0-5.2 s so,
  // 6.1-7.0 s when only a verdict within one period doubled it).
  static constexpr std::int64_t min_period_ns = 20'000'000;
  static constexpr std::int64_t max_period_ns = 1'600'000'000;
  static constexpr std::int64_t still_there_ns = 1'000'000'000;

  std::int64_t until = 0;             // no yields before this time (ns, now_ns's clock)
  std::int64_t period = min_period_ns;  // the last period's length

  bool may_yield(std::int64_t now) const { return now >= until; }
  // Another program took a yield at `now`: a period without yields starts.
  void start(std::int64_t now) {
    const bool again = now - until < std::max(still_there_ns, period);
    period = again ? std::min(2 * period, max_period_ns) : min_period_ns;
    until = now + period;
  }
};

}  // namespace squall
