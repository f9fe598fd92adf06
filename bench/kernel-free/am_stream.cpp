// SPDX-License-Identifier: BSD-3-Clause
// am_stream: the ARMI aggregation experiment. Node 0 sends k small messages to node 1 and
// then one that node 1 answers; the time per round is measured for several aggregation
// factors (messages per packet), each beside factor 1 in the same run.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <squall/squall.hpp>

#include "common/report.hpp"

namespace {

constexpr int trials = 5;
std::uint64_t received = 0;
bool answered = false;
bool stop = false;

void on_item(squall::am::token&, std::uint64_t v) { received += v & 1; }
void on_answer(squall::am::token&) { answered = true; }
void on_last(squall::am::token& t) { t.reply<on_answer>(); }
void on_stop(squall::am::token&) { stop = true; }

// Seconds for k messages and the round trip that closes them, on node 0.
double stream_round(int me, int k, unsigned factor) {
  squall::am::set_aggregation(factor);
  answered = false;
  stop = false;
  squall::barrier();  // state is reset everywhere before the first message
  const auto t0 = std::chrono::steady_clock::now();
  if (me == 0) {
    for (int i = 0; i < k; ++i) squall::am::send<on_item>(1, std::uint64_t(i));
    squall::am::send<on_last>(1);
    squall::am::wait_until([] { return answered; });
    squall::am::send<on_stop>(1);
  } else if (me == 1) {
    squall::am::wait_until([] { return stop; });
  }
  const double s = squall::bench::seconds_since(t0);
  squall::barrier();
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  const int me = squall::node();
  int k = 10000;
  squall::bench::command_line options("am_stream", argc, argv, me);
  options.positive("-k", k);
  const bool json = options.flag("--json");
  if (!options.finish()) return 2;
  if (!squall::bench::has_two_nodes("am_stream", squall::nodes(), me, false)) return 1;
  const unsigned factors[] = {1, 4, 16, 64, 256, 1024};
  std::vector<std::vector<double>> times(std::size(factors));
  stream_round(me, k, 1);  // warm-up
  for (int t = 0; t < trials; ++t) {
    for (std::size_t f = 0; f < std::size(factors); ++f) times[f].push_back(stream_round(me, k, factors[f]));
  }
  if (me == 0) {
    squall::bench::figures fig;
    const double base = squall::bench::median(times[0]);
    for (std::size_t f = 0; f < std::size(factors); ++f) {
      const double m = squall::bench::median(times[f]);
      fig.add("ns_per_msg_factor_" + std::to_string(factors[f]), m / k * 1e9);
    }
    for (std::size_t f = 1; f < std::size(factors); ++f) {
      fig.add("speedup_" + std::to_string(factors[f]) + "_vs_1", base / squall::bench::median(times[f]));
    }
    fig.add("k", k);
    fig.print(("am_stream: k small messages then one reply, node 0 -> node 1 (median of " +
               std::to_string(trials) + ")").c_str(),
              json);
  }
}
