// SPDX-License-Identifier: BSD-3-Clause
// line_handoff: what it costs to hand a cache line back and forth between the cores of
// nodes 0 and 1. It is not a target but the hardware under am_pingpong's floor and ratio:
//
// - `work_W`: a ping-pong on one shared word, where each side, between seeing the other's
//   value and writing its own, runs W ns of dependent arithmetic that its store depends
//   on, as an active-message layer runs its dispatch and handler between detecting a
//   request and storing the reply. Beside it, the ideal: the floor (W = 0) plus 2W. Where
//   the measured round trip leaves the ideal, the waiting side's polling reads have taken
//   the line back before the replier wrote it, and the reply costs more transfers.
//   `budget_ns_for_2x_floor`: the work per side at which the round trip reaches twice the
//   floor - what a message layer may spend between detecting a message and storing its
//   reply, on each side, to meet am_pingpong's target of 2.
// - `two_lines`: the same ping-pong (W = 0) with each direction in a line of its own.
// - `floor_demoted`: the floor with each store followed by CLDEMOTE, which pushes the line
//   to the shared cache, as the message layer's mailbox does (kernel-free/TRANSPORTS.md):
//   what the hint is worth to a bare flag.
// - `reread`: a core writes a line, the other core reads it; how long the writer's next
//   read of its own line takes, beside a read that hits. When it costs a transfer, a read
//   moves the line away from its writer: a poller takes the line from whoever works on it.
//
// x86-64 only (the reread test reads the time-stamp counter).
#include <x86intrin.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <squall/squall.hpp>

#include "common/report.hpp"
#include "common/spin.hpp"
#include "kernel-free/shared_page.hpp"

namespace {

constexpr int iterations = 20000;
constexpr int trials = 7;
constexpr int work_ns[] = {0, 5, 10, 15, 20, 25, 30, 40, 60, 80, 120};

struct alignas(64) line {
  std::atomic<std::uint64_t> word;
};
struct page {
  line one;         // both directions
  line there, back;  // one line per direction
  line written, seen;  // the reread test
};

// A chain of dependent one-cycle operations; the compiler may neither fold nor shorten it.
inline std::uint64_t chain(std::uint64_t x, long n) {
  for (long i = 0; i < n; ++i) {
    x = x * 3 + 1;
    asm volatile("" : "+r"(x));
  }
  return x;
}

double chain_ns_per_step() {
  constexpr long steps = 200'000'000;
  const auto t0 = std::chrono::steady_clock::now();
  const std::uint64_t x = chain(static_cast<std::uint64_t>(t0.time_since_epoch().count()), steps);
  const double ns = squall::bench::seconds_since(t0) * 1e9 / steps;
  return x == 0 ? ns + 1e-12 : ns;  // uses x
}

// CLDEMOTE (a no-op on processors without it).
inline void demote(const void* p) { asm volatile("cldemote %0" : : "m"(*static_cast<const volatile char*>(p))); }

void wait_for(const std::atomic<std::uint64_t>& w, std::uint64_t v) {
  squall::bench::spin_until([&] { return w.load(std::memory_order_acquire) == v; });
}

// Round trip in microseconds; `seq` numbers the values written, the same on both sides.
double pingpong(std::atomic<std::uint64_t>& out, const std::atomic<std::uint64_t>& in, int me, long steps,
                std::uint64_t& seq, bool demoted = false) {
  auto store = [&](std::uint64_t v) {
    out.store(v, std::memory_order_release);
    if (demoted) demote(&out);
  };
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i, seq += 2) {
    if (me == 0) {
      if (i == 0) store(seq + 1);
      wait_for(in, seq + 2);
      // The store depends on the work (x never equals ~0 in practice, but the core cannot know).
      const std::uint64_t x = chain(seq, steps);
      if (i + 1 < iterations) store(seq + 3 + (x == ~0ULL));
    } else {
      wait_for(in, seq + 1);
      const std::uint64_t x = chain(seq, steps);
      store(seq + 2 + (x == ~0ULL));
    }
  }
  return squall::bench::seconds_since(t0) / iterations * 1e6;
}

double median_pingpong(std::atomic<std::uint64_t>& out, const std::atomic<std::uint64_t>& in, int me,
                       long steps, std::uint64_t& seq, bool demoted = false) {
  std::vector<double> us;
  for (int t = 0; t < trials; ++t) {
    squall::barrier();
    us.push_back(pingpong(out, in, me, steps, seq, demoted));
  }
  return squall::bench::median(us);
}

double tsc_per_ns() {
  const auto t0 = std::chrono::steady_clock::now();
  const std::uint64_t c0 = __rdtsc();
  while (squall::bench::seconds_since(t0) < 0.02) {
  }
  return static_cast<double>(__rdtsc() - c0) / (squall::bench::seconds_since(t0) * 1e9);
}

// Node 0 writes `written`, node 1 reads it and says so in `seen`; node 0 then times its own
// next read of `written`, and a second read (a hit). Medians in ns.
std::pair<double, double> reread(page& p, int me) {
  constexpr int rounds = 20001;
  std::vector<double> after_peer, hit;
  const double per_ns = me == 0 ? tsc_per_ns() : 1;
  squall::barrier();
  for (std::uint64_t i = 1; i <= rounds; ++i) {
    if (me == 0) {
      p.written.word.store(i, std::memory_order_release);
      wait_for(p.seen.word, i);
      unsigned aux;
      const std::uint64_t t0 = __rdtscp(&aux);
      std::uint64_t v = p.written.word.load(std::memory_order_relaxed);
      const std::uint64_t t1 = __rdtscp(&aux);
      v += p.written.word.load(std::memory_order_relaxed);
      const std::uint64_t t2 = __rdtscp(&aux);
      if (v != 2 * i) std::fprintf(stderr, "line_handoff: read %llu\n", static_cast<unsigned long long>(v));
      after_peer.push_back(static_cast<double>(t1 - t0) / per_ns);
      hit.push_back(static_cast<double>(t2 - t1) / per_ns);
    } else {
      wait_for(p.written.word, i);
      p.seen.word.store(i, std::memory_order_release);
    }
  }
  return {squall::bench::median(after_peer), squall::bench::median(hit)};
}

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  const int me = squall::node();
  squall::bench::command_line options("line_handoff", argc, argv, me);
  const bool json = options.flag("--json");
  if (!options.finish()) return 2;
  if (!squall::bench::has_two_nodes("line_handoff", squall::nodes(), me, true)) return 1;
  auto& p = *new (squall::bench::shared_page("line_handoff")) page{};
  double step_ns = me == 0 ? chain_ns_per_step() : 0;
  squall::broadcast(step_ns);

  std::uint64_t seq = 0;
  std::vector<double> one_line;
  for (const int w : work_ns) {
    one_line.push_back(median_pingpong(p.one.word, p.one.word, me, static_cast<long>(w / step_ns), seq));
  }
  seq = 0;
  const double two_lines = median_pingpong(me == 0 ? p.there.word : p.back.word,
                                           me == 0 ? p.back.word : p.there.word, me, 0, seq);
  seq = 0;
  p.one.word.store(0);
  squall::barrier();
  const double floor_demoted = median_pingpong(p.one.word, p.one.word, me, 0, seq, /*demoted=*/true);
  const auto [after_peer_ns, hit_ns] = reread(p, me);

  if (me == 0) {
    squall::bench::figures f;
    const double floor = one_line[0];
    f.add("floor_rtt_us", floor);
    double budget = -1;
    for (std::size_t i = 1; i < one_line.size(); ++i) {
      const double ideal = floor + 2 * work_ns[i] / 1000.0;
      f.add("work_" + std::to_string(work_ns[i]) + "ns_rtt_us", one_line[i]);
      f.add("work_" + std::to_string(work_ns[i]) + "ns_over_ideal", one_line[i] / ideal);
      if (budget < 0 && one_line[i] >= 2 * floor) {
        // Interpolated between this work and the one before: the most work per side that
        // keeps the round trip within twice the floor (am_pingpong's target).
        const double below = one_line[i - 1], above = one_line[i];
        budget = work_ns[i - 1] + (work_ns[i] - work_ns[i - 1]) * (2 * floor - below) / (above - below);
      }
    }
    f.add("budget_ns_for_2x_floor", budget);
    f.add("two_lines_rtt_us", two_lines);
    f.add("floor_demoted_rtt_us", floor_demoted);
    f.add("reread_after_peer_read_ns", after_peer_ns);
    f.add("reread_hit_ns", hit_ns);
    f.print("line_handoff: one cache line between nodes 0 and 1 (medians)",
            json);
  }
}
