// SPDX-License-Identifier: BSD-3-Clause
// tsm_busy_home: what a TSM read miss costs when the node that must serve it is computing,
// beside the same miss when that node waits in a barrier (and so polls). 256 blocks of 4 KiB
// homed at node 1, in two cases:
//   home    node 1 writes them (ReadWrite at the home); node 0 reads: node 0 asks node 1
//   owner   node 0 writes them (ReadWrite at node 0); node 1, the home, reads: node 1 asks
//           node 0 for the block back (DSMC's receive buffers, read by their home)
// Between two barriers the serving node either computes (a loop that never enters the
// library) or waits, while the reading node reads the first byte of every block, computing
// 200 us between reads so that the server's progress thread has gone back to sleep, as in
// an application. With every core computing, the normal case in HPC, a request waits until
// the server's progress thread gets a core.
//   {home,owner}_idle_us   median read miss, server waiting in the barrier
//   {home,owner}_busy_us   median read miss, server computing
//   {home,owner}_busy_p90_us
//   ratio                  owner_busy_us / home_idle_us
//   wake_busy_floor_us     the floor under a busy miss, outside the library (busy_floor.hpp):
//   signal_busy_floor_us   a thread woken, or a signal delivered, on a computing processor
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>

#include "busy_floor.hpp"
#include "common/report.hpp"

namespace {

namespace tsm = squall::tsm;
using Clock = std::chrono::steady_clock;

constexpr std::size_t page = 4096;
constexpr std::size_t blocks = 256;
constexpr int trials = 7;

// The server's computation: arithmetic that never enters the library, until the reader says
// it is done (a word homed at the reader) or a second has passed.
void compute_until(volatile const int* done) {
  volatile double x = 1.0;
  const auto end = Clock::now() + std::chrono::seconds(1);
  while (*done == 0 && Clock::now() < end) {
    for (int i = 0; i < 20000; ++i) x = x * 1.0000001 + 1e-9;
  }
}

void spin_for(std::chrono::microseconds span) {
  const auto end = Clock::now() + span;
  while (Clock::now() < end) {
  }
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

struct Case {
  const char* name;
  int writer, reader;
  std::vector<double> idle_us, busy_us;
};

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  const int me = squall::node();
  squall::bench::command_line options("tsm_busy_home", argc, argv, me);
  const bool json = options.flag("--json");
  if (!options.finish()) return 2;
  if (!squall::bench::has_two_nodes("tsm_busy_home", squall::nodes(), me, false)) return 1;
  const auto at = [](int node) { return squall::memory::home_policy::function([node](std::size_t) { return node; }); };
  auto* data = tsm::alloc<std::byte>(blocks * page, {.homes = at(1)});
  int* done[2] = {tsm::alloc<int>(page / sizeof(int), {.homes = at(0)}), tsm::alloc<int>(page / sizeof(int), {.homes = at(1)})};
  Case cases[] = {{"home", 1, 0, {}, {}}, {"owner", 0, 1, {}, {}}};
  bool right = true;
  for (int t = 0; t < 4 * trials; ++t) {
    Case& c = cases[t % 2];
    const bool busy = (t / 2) % 2 == 1;  // idle and busy trials alternate
    const char value = static_cast<char>(t);
    if (me == c.reader) *done[c.reader] = 0;
    if (me == c.writer) {
      for (std::size_t b = 0; b < blocks; ++b) *reinterpret_cast<volatile char*>(data + b * page) = value;
    }
    tsm::barrier();
    if (me == c.reader) {
      std::vector<double>& us = busy ? c.busy_us : c.idle_us;
      for (std::size_t b = 0; b < blocks; ++b) {
        const auto t0 = Clock::now();
        right = right && *reinterpret_cast<volatile char*>(data + b * page) == value;
        if (t >= 4) us.push_back(squall::bench::seconds_since(t0) * 1e6);  // the first round warms up
        spin_for(std::chrono::microseconds(200));
      }
      *done[c.reader] = 1;
    } else if (me == c.writer && busy) {
      compute_until(done[c.reader]);
    }
    tsm::barrier();
  }
  for (int* d : done) tsm::free(d);
  tsm::free(data);
  if (!right) {
    std::fprintf(stderr, "tsm_busy_home: a reader did not see the other node's write\n");
    return 1;
  }
  // Each case's reader holds its figures; the sum over the nodes brings them to node 0.
  std::vector<double> figures;
  for (const Case& c : cases) {
    const bool mine = me == c.reader;
    figures.push_back(mine ? squall::bench::median(c.idle_us) : 0);
    figures.push_back(mine ? squall::bench::median(c.busy_us) : 0);
    figures.push_back(mine ? percentile(c.busy_us, 0.9) : 0);
  }
  for (double& x : figures) x = squall::allreduce(x);
  // Node 0 measures the floor while the other nodes wait in the barrier below.
  const squall::bench::busy_floor floor = me == 0 ? squall::bench::measure_busy_floor() : squall::bench::busy_floor{};
  tsm::barrier();
  if (me == 0) {
    squall::bench::figures f;
    for (std::size_t k = 0; k < 2; ++k) {
      const std::string name = cases[k].name;
      f.add(name + "_idle_us", figures[3 * k]);
      f.add(name + "_busy_us", figures[3 * k + 1]);
      f.add(name + "_busy_p90_us", figures[3 * k + 2]);
    }
    f.add("ratio", figures[4] / figures[0]);
    f.add("wake_busy_floor_us", floor.wake_us);
    f.add("signal_busy_floor_us", floor.signal_us);
    f.print("tsm_busy_home: 4 KiB read misses, the serving node waiting vs computing (medians)",
            json);
  }
  return 0;
}
