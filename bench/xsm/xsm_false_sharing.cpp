// SPDX-License-Identifier: BSD-3-Clause
// xsm_false_sharing: radix's write pattern under stache and under libxsm's multiple-writer
// protocol, in one run. N nodes share 8 pages of 4 KiB (homed round robin); node k owns
// words [k * 512 / N, (k + 1) * 512 / N) of every page. An iteration: every node writes each
// word of its slices once, going across the pages word by word (as radix's permutation
// writes its buckets, each node into its own part of pages the others also write), then a
// tsm::barrier. Trials alternate between the protocols, each on an array allocated afresh,
// with one untimed iteration first; figures are medians over trials (--trials T, default 5;
// --iterations I, default 10). Messages are every active message all nodes sent in the timed
// iterations (protocol, barrier and all), per iteration. The array is checked after each
// trial; a wrong word exits 1.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <squall/squall.hpp>
#include <squall/stats.hpp>
#include <squall/tsm.hpp>
#include <squall/xsm.hpp>
#include <squall/xsm/multiple_writer.hpp>

#include "common/report.hpp"

namespace {

namespace tsm = squall::tsm;
namespace xsm = squall::xsm;
using word = std::uint64_t;

constexpr std::size_t page_words = 4096 / sizeof(word);
constexpr std::size_t pages = 32;

word value(int iteration, std::size_t i) { return static_cast<word>(iteration + 1) * 0x9E3779B97F4A7C15ull + i; }

struct result {
  double us_per_iteration = 0, messages_per_iteration = 0;
};

// Collective: every node's active messages so far, summed.
double messages_sent() {
  return static_cast<double>(squall::allreduce<std::uint64_t>(squall::stats::take().get("am.messages_sent")));
}

void write_slices(word* x, int iteration) {
  const std::size_t w = page_words / static_cast<std::size_t>(squall::nodes());
  const std::size_t from = static_cast<std::size_t>(squall::node()) * w;
  for (std::size_t k = from; k < from + w; ++k) {
    for (std::size_t p = 0; p < pages; ++p) x[p * page_words + k] = value(iteration, p * page_words + k);
  }
}

// One trial on x; false if the array does not hold the last iteration's values.
bool trial(word* x, int iterations, result& r) {
  write_slices(x, 0);  // untimed: first touches
  tsm::barrier();
  const double before = messages_sent();
  const auto t0 = std::chrono::steady_clock::now();
  for (int it = 1; it <= iterations; ++it) {
    write_slices(x, it);
    tsm::barrier();
  }
  r.us_per_iteration = squall::bench::seconds_since(t0) * 1e6 / iterations;
  r.messages_per_iteration = (messages_sent() - before) / iterations;
  squall::broadcast(r.us_per_iteration, 0);
  bool right = true;
  for (std::size_t i = 0; i < pages * page_words; ++i) right = right && x[i] == value(iterations, i);
  tsm::barrier();  // every node has checked before the array goes
  return right;
}

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  const int me = squall::node();
  int trials = 5, iterations = 10;
  squall::bench::command_line options("xsm_false_sharing", argc, argv, me);
  options.positive("--trials", trials);
  options.positive("--iterations", iterations);
  const bool json = options.flag("--json");
  if (!options.finish()) return 2;
  if (!squall::bench::has_two_nodes("xsm_false_sharing", squall::nodes(), me, false)) return 1;
  std::vector<double> stache_us, stache_messages, mw_us, mw_messages;
  bool right = true;
  for (int t = 0; t < trials; ++t) {
    result r;
    word* x = tsm::alloc<word>(pages * page_words);
    right = trial(x, iterations, r) && right;
    tsm::free(x);
    stache_us.push_back(r.us_per_iteration);
    stache_messages.push_back(r.messages_per_iteration);

    xsm::multiple_writer mw;
    x = xsm::alloc<word>(pages * page_words, mw);
    right = trial(x, iterations, r) && right;
    xsm::free(x);
    mw_us.push_back(r.us_per_iteration);
    mw_messages.push_back(r.messages_per_iteration);
  }
  if (squall::allreduce<int>(right ? 1 : 0, squall::op::min{}) == 0) {
    if (me == 0) std::fprintf(stderr, "xsm_false_sharing: a node read wrong values\n");
    return 1;
  }
  if (me != 0) return 0;
  using squall::bench::median;
  squall::bench::figures f;
  f.add("stache_us_per_iter", median(stache_us));
  f.add("mw_us_per_iter", median(mw_us));
  f.add("stache_messages", median(stache_messages));
  f.add("mw_messages", median(mw_messages));
  f.add("time_ratio", median(stache_us) / median(mw_us));
  f.add("message_ratio", median(stache_messages) / median(mw_messages));
  char title[200];
  std::snprintf(title, sizeof title,
                "xsm_false_sharing: %d nodes, %zu pages of 4 KiB, each node its slice of every page; median of %d "
                "trials of %d iterations; messages per iteration, all nodes",
                squall::nodes(), pages, trials, iterations);
  f.print(title, json);
  return 0;
}
