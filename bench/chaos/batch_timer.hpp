// SPDX-License-Identifier: BSD-3-Clause
// How both chaos_exchange programs time an exchange, so that their figures compare: `trials`
// batches of `reps` back-to-back executions, each batch started together (after `sync`, a
// barrier), each node timing its own batch. The caller takes the slowest node per batch
// (an exchange is over when its last node is done) and the median over batches.
#pragma once
#include <chrono>
#include <vector>

namespace squall::bench::chaos_exchange {

struct batch_plan {
  int trials = 31;  // batches, after one untimed warm-up batch
  int reps = 50;    // executions per batch
};

// Microseconds per execution for each batch, on this node's clock.
template <class Sync, class Op>
std::vector<double> time_batches(const batch_plan& plan, Sync sync, Op op) {
  std::vector<double> us;
  for (int t = -1; t < plan.trials; ++t) {
    sync();
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < plan.reps; ++r) op();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (t >= 0) us.push_back(s / plan.reps * 1e6);
  }
  return us;
}

}  // namespace squall::bench::chaos_exchange
