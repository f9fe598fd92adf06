// SPDX-License-Identifier: BSD-3-Clause
// am_pingpong: round trip of a small active message between nodes 0 and 1, beside the
// floor: a raw ping-pong on one shared-memory flag between the same two processes.
// --iters K round trips per trial (default 100000), --trials T trials (default 7).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include <squall/squall.hpp>

#include "common/report.hpp"
#include "common/spin.hpp"
#include "kernel-free/shared_page.hpp"

namespace {

std::uint64_t pongs = 0;
bool stop = false;

void on_pong(squall::am::token&, std::uint64_t) { ++pongs; }
void on_ping(squall::am::token& t, std::uint64_t i) { t.reply<on_pong>(i); }
void on_stop(squall::am::token&) { stop = true; }

// The floor: node 0 writes odd values, node 1 answers with the next even one.
double flag_pingpong(std::atomic<std::uint64_t>& flag, int me, std::uint64_t iterations) {
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < iterations; ++i) {
    if (me == 0) {
      flag.store(2 * i + 1, std::memory_order_release);
      squall::bench::spin_until([&] { return flag.load(std::memory_order_acquire) == 2 * i + 2; });
    } else {
      squall::bench::spin_until([&] { return flag.load(std::memory_order_acquire) == 2 * i + 1; });
      flag.store(2 * i + 2, std::memory_order_release);
    }
  }
  return squall::bench::seconds_since(t0) / iterations * 1e6;
}

double am_pingpong(int me, std::uint64_t iterations) {
  pongs = 0;
  stop = false;
  squall::barrier();  // state is reset everywhere before the first message
  const auto t0 = std::chrono::steady_clock::now();
  if (me == 0) {
    for (std::uint64_t i = 0; i < iterations; ++i) {
      squall::am::send<on_ping>(1, i);
      squall::am::wait_until([&] { return pongs == i + 1; });
    }
    squall::am::send<on_stop>(1);
  } else {
    squall::am::wait_until([] { return stop; });
  }
  return squall::bench::seconds_since(t0) / iterations * 1e6;
}

std::atomic<std::uint64_t>& shared_flag() {
  return *new (squall::bench::shared_page("pingpong")) std::atomic<std::uint64_t>(0);
}

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  const int me = squall::node();
  int iterations = 100000, trials = 7;
  squall::bench::command_line options("am_pingpong", argc, argv, me);
  options.positive("--iters", iterations);
  options.positive("--trials", trials);
  const bool json = options.flag("--json");
  if (!options.finish()) return 2;
  if (!squall::bench::has_two_nodes("am_pingpong", squall::nodes(), me, false)) return 1;
  std::vector<double> floor_us, am_us;
  if (me < 2) {
    auto& flag = shared_flag();
    am_pingpong(me, iterations);  // warm-up
    for (int t = 0; t < trials; ++t) {
      flag.store(0);
      squall::barrier();
      floor_us.push_back(flag_pingpong(flag, me, iterations));
      am_us.push_back(am_pingpong(me, iterations));
    }
  } else {
    // Nodes beyond 2 take part only in the collectives.
    squall::bench::shared_page("pingpong");
    squall::barrier();
    for (int t = 0; t < trials; ++t) {
      squall::barrier();
      squall::barrier();
    }
  }
  if (me == 0) {
    squall::bench::figures f;
    const double am = squall::bench::median(am_us), fl = squall::bench::median(floor_us);
    f.add("am_rtt_us", am);
    f.add("floor_rtt_us", fl);
    f.add("ratio", am / fl);
    const std::string title = "am_pingpong: small active-message round trip, node 0 <-> node 1 (median of " +
                              std::to_string(trials) + " x " + std::to_string(iterations) + ")";
    f.print(title.c_str(), json);
  }
}
