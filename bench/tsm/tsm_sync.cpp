// SPDX-License-Identifier: BSD-3-Clause
// tsm_sync: lock handoff and barrier latency on 2 nodes.
//   lock_handoff_us  both nodes acquire one lock (homed on node 0) over and over, adding one
//                    to a shared counter inside: time per acquisition, the lock and the
//                    counter's block moving between the nodes; a node keeps the lock until
//                    the other asks, so it may take it several times in a row
//   barrier_us       time per tsm::barrier
// Medians of 7 trials.
#include <cstdio>
#include <vector>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>

#include "common/report.hpp"

namespace {

namespace tsm = squall::tsm;
constexpr int trials = 7;
constexpr int acquisitions = 2000;  // per node per trial
constexpr int barriers = 5000;

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  const int me = squall::node(), n = squall::nodes();
  auto* counter = tsm::alloc<std::uint64_t>(1);
  tsm::lock_array lock(1);
  std::vector<double> handoff_us, barrier_us;
  for (int t = 0; t < trials; ++t) {
    tsm::barrier();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < acquisitions; ++i) {
      lock.acquire(0);
      *counter += 1;
      lock.release(0);
    }
    tsm::barrier();
    handoff_us.push_back(squall::bench::seconds_since(t0) * 1e6 / (acquisitions * n));
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < barriers; ++i) tsm::barrier();
    barrier_us.push_back(squall::bench::seconds_since(t0) * 1e6 / barriers);
  }
  const bool right = *counter == static_cast<std::uint64_t>(trials) * acquisitions * n;
  tsm::barrier();
  tsm::free(counter);
  if (!right) {
    std::fprintf(stderr, "tsm_sync: the counter lost increments\n");
    return 1;
  }
  if (me == 0) {
    squall::bench::figures f;
    f.add("lock_handoff_us", squall::bench::median(handoff_us));
    f.add("barrier_us", squall::bench::median(barrier_us));
    f.add("nodes", n);
    f.print("tsm_sync: one lock taken in turn by every node, and barriers (median of 7)",
            squall::bench::has_flag(argc, argv, "--json"));
  }
  return 0;
}
