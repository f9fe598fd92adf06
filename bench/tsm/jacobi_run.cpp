// SPDX-License-Identifier: BSD-3-Clause
// jacobi_run: one run of a 2-D Jacobi (5-point stencil, two grids of N x N doubles, I
// iterations, one barrier each), on TSM or on threads, for bench/tsm/tsm_jacobi.
//   squallrun -n P jacobi_run [--n N] [--iterations I]          TSM: node k computes, and is home
//             [--workers W]                                      to, the k-th band of rows; W threads
//                                                                of each node split its band and
//                                                                share the node's memory
//   jacobi_run --threads T [--n N] [--iterations I]              T threads, std::barrier
// Prints "time_ms", the checksum (sum of the final grid), and with TSM the misses and messages
// (read, write, upgrade) of the timed iterations; with --json one JSON object as the last line.
#include <barrier>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>

#include "common/report.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Grid {
  int n;
  double* a;  // read in even iterations
  double* b;  // written in even iterations
};

// The boundary holds 1.0 on the top edge and 0 elsewhere; the interior starts at 0.
void initialise_rows(const Grid& g, int first, int end) {
  for (int i = first; i < end; ++i) {
    for (int j = 0; j < g.n; ++j) {
      const double v = i == 0 ? 1.0 : 0.0;
      g.a[static_cast<std::size_t>(i) * g.n + j] = v;
      g.b[static_cast<std::size_t>(i) * g.n + j] = v;
    }
  }
}

void relax_rows(const double* from, double* to, int n, int first, int end) {
  for (int i = std::max(first, 1); i < std::min(end, n - 1); ++i) {
    const double* up = from + static_cast<std::size_t>(i - 1) * n;
    const double* row = up + n;
    const double* down = row + n;
    double* out = to + static_cast<std::size_t>(i) * n;
    for (int j = 1; j < n - 1; ++j) out[j] = 0.25 * (up[j] + down[j] + row[j - 1] + row[j + 1]);
  }
}

double sum_rows(const double* grid, int n, int first, int end) {
  double s = 0;
  for (std::size_t k = static_cast<std::size_t>(first) * n; k < static_cast<std::size_t>(end) * n; ++k) s += grid[k];
  return s;
}

int band_first(int n, int parts, int k) { return static_cast<int>(static_cast<long>(n) * k / parts); }

struct Result {
  double ms;
  double checksum;
};

Result run_threads(int n, int iterations, int threads) {
  std::vector<double> a(static_cast<std::size_t>(n) * n), b(a.size());
  const Grid g{n, a.data(), b.data()};
  std::barrier sync(threads);
  std::vector<double> sums(static_cast<std::size_t>(threads));
  Clock::time_point t0;
  double seconds = 0;
  auto work = [&](int k) {
    const int first = band_first(n, threads, k), end = band_first(n, threads, k + 1);
    initialise_rows(g, first, end);
    sync.arrive_and_wait();
    if (k == 0) t0 = Clock::now();
    for (int it = 0; it < iterations; ++it) {
      relax_rows(it % 2 ? g.b : g.a, it % 2 ? g.a : g.b, n, first, end);
      sync.arrive_and_wait();
    }
    if (k == 0) seconds = squall::bench::seconds_since(t0);
    sums[static_cast<std::size_t>(k)] = sum_rows(iterations % 2 ? g.b : g.a, n, first, end);
  };
  std::vector<std::thread> others;
  for (int k = 1; k < threads; ++k) others.emplace_back(work, k);
  work(0);
  for (auto& t : others) t.join();
  double s = 0;
  for (double x : sums) s += x;
  return {seconds * 1e3, s};
}

// Read misses, write misses and upgrades on both grids, this node.
std::uint64_t misses_of(const Grid& g) {
  std::uint64_t m = 0;
  for (const double* grid : {g.a, g.b}) {
    const squall::tsm::counts c = squall::tsm::counts_of(grid);
    m += c.read_misses + c.write_misses + c.upgrades;
  }
  return m;
}

// The node's band of rows, split among its `workers` threads; every iteration ends with a
// barrier of the node's threads whose completion is the nodes' tsm::barrier.
Result run_tsm(int n, int iterations, int workers, std::uint64_t& misses) {
  namespace tsm = squall::tsm;
  const int me = squall::node(), nodes = squall::nodes();
  const std::size_t row_bytes = static_cast<std::size_t>(n) * sizeof(double);
  const std::size_t block = tsm::options{}.block_size;
  // Block b of a grid holds bytes [b*block, (b+1)*block): its home computes the row they are in.
  auto homes = squall::memory::home_policy::function([=](squall::memory::block_index b) {
    const long row = static_cast<long>(b * block / row_bytes);
    for (int k = nodes - 1; k >= 0; --k) {
      if (row >= band_first(n, nodes, k)) return k;
    }
    return 0;
  });
  const std::size_t cells = static_cast<std::size_t>(n) * n;
  const Grid g{n, tsm::alloc<double>(cells, {.homes = homes}), tsm::alloc<double>(cells, {.homes = homes})};
  const int first = band_first(n, nodes, me), end = band_first(n, nodes, me + 1);
  initialise_rows(g, first, end);
  tsm::barrier();
  const std::uint64_t before = misses_of(g);
  std::barrier sync(workers, []() noexcept { tsm::barrier(); });
  const auto t0 = Clock::now();
  auto work = [&](int w) {
    const int from = first + band_first(end - first, workers, w), to = first + band_first(end - first, workers, w + 1);
    for (int it = 0; it < iterations; ++it) {
      relax_rows(it % 2 ? g.b : g.a, it % 2 ? g.a : g.b, n, from, to);
      sync.arrive_and_wait();
    }
  };
  std::vector<std::thread> others;
  for (int w = 1; w < workers; ++w) others.emplace_back(work, w);
  work(0);
  for (auto& t : others) t.join();
  const double seconds = squall::bench::seconds_since(t0);

  misses = misses_of(g) - before;
  const double sum = squall::allreduce(sum_rows(iterations % 2 ? g.b : g.a, n, first, end));
  tsm::barrier();
  tsm::free(g.a);
  tsm::free(g.b);
  return {squall::allreduce(me == 0 ? seconds * 1e3 : 0.0), sum};
}

}  // namespace

int main(int argc, char** argv) {
  int n = 2048, iterations = 20, threads = 0, workers = 1;
  // Read before the runtime starts (a run on threads starts none): every node speaks.
  squall::bench::command_line options("jacobi_run", argc, argv, 0);
  options.positive("--n", n);
  options.positive("--iterations", iterations);
  options.positive("--threads", threads);
  options.positive("--workers", workers);
  const bool json = options.flag("--json");
  if (!options.finish()) return 2;
  const bool with_threads = threads != 0;
  squall::bench::figures f;
  if (with_threads) {
    const Result r = run_threads(n, iterations, threads);
    f.add("time_ms", r.ms);
    f.add("checksum", r.checksum);
    f.print("jacobi_run: threads", json);
    return 0;
  }
  squall::runtime rt(&argc, &argv);
  std::uint64_t mine = 0;
  const Result r = run_tsm(n, iterations, workers, mine);
  const double misses = squall::allreduce(static_cast<double>(mine));
  if (squall::node() == 0) {
    f.add("time_ms", r.ms);
    f.add("checksum", r.checksum);
    f.add("misses", misses);
    f.print("jacobi_run: TSM", json);
  }
  return 0;
}
