// SPDX-License-Identifier: BSD-3-Clause
// tsm_sync: lock handoff and barrier latency on 2 nodes.
//   lock_handoff_us  both nodes acquire one lock (homed on node 0) over and over, adding one
//                    to a shared counter inside: time per acquisition, the lock and the
//                    counter's block moving between the nodes; a node keeps the lock until
//                    the other asks, so it may take it several times in a row
//   lock_alternating_us  the nodes take the lock strictly in turn, each told by a message
//                    from the one before (a ring): time per acquisition, the message included;
//                    a kept lock must be recalled from the node before each time
//   turn_only_us     the same ring of messages without the lock (the floor beside it)
//   barrier_us       time per tsm::barrier
// Medians of 7 trials.
#include <atomic>
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
constexpr int turns_per_node = 1000;

std::atomic<int> turns_received{0};
void on_turn(squall::am::token&) { turns_received.fetch_add(1); }

// Every node `rounds` times, strictly in turn (node 0 first): wait for the turn, run `body`,
// pass the turn on. Returns the time per turn.
template <class Body>
double in_turn(int rounds, Body&& body) {
  const int me = squall::node(), n = squall::nodes();
  turns_received.store(0);
  tsm::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < rounds; ++r) {
    const int want = me == 0 ? r : r + 1;
    if (me != 0 || r != 0) squall::am::wait_until([want] { return turns_received.load() >= want; });
    body();
    squall::am::send<on_turn>((me + 1) % n);
  }
  if (me == 0) squall::am::wait_until([rounds] { return turns_received.load() >= rounds; });
  tsm::barrier();
  return squall::bench::seconds_since(t0) * 1e6 / (rounds * n);
}

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  const int me = squall::node(), n = squall::nodes();
  squall::bench::command_line options("tsm_sync", argc, argv, me);
  const bool json = options.flag("--json");
  if (!options.finish()) return 2;
  auto* counter = tsm::alloc<std::uint64_t>(1);
  tsm::lock_array lock(1);
  std::vector<double> handoff_us, barrier_us, alternating_us, turn_us;
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
    alternating_us.push_back(in_turn(turns_per_node, [&] {
      lock.acquire(0);
      *counter += 1;
      lock.release(0);
    }));
    turn_us.push_back(in_turn(turns_per_node, [] {}));
  }
  const bool right = *counter == static_cast<std::uint64_t>(trials) * (acquisitions + turns_per_node) * n;
  tsm::barrier();
  tsm::free(counter);
  if (!right) {
    std::fprintf(stderr, "tsm_sync: the counter lost increments\n");
    return 1;
  }
  if (me == 0) {
    squall::bench::figures f;
    f.add("lock_handoff_us", squall::bench::median(handoff_us));
    f.add("lock_alternating_us", squall::bench::median(alternating_us));
    f.add("turn_only_us", squall::bench::median(turn_us));
    f.add("barrier_us", squall::bench::median(barrier_us));
    f.add("nodes", n);
    f.print("tsm_sync: one lock taken by every node, freely and strictly in turn, and barriers (median of 7)",
            json);
  }
  return 0;
}
