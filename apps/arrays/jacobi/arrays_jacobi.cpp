// SPDX-License-Identifier: BSD-3-Clause
// arrays_jacobi: the Charm++ paper's 2-D Jacobi example (section 10) on a migratable array.
//
// The n x n periodic grid is cut into b x b blocks, one element of a 2-D array each, placed
// by block_home so that each node starts with a contiguous run of blocks. An iteration has no
// barrier: a block sends its four edges to its neighbours after each step, and computes step
// k as soon as it holds all four neighbours' edges of step k (an edge of step k+1 that comes
// early waits in the other buffer: a neighbour can be at most one step ahead). Every
// `--check-every` steps the blocks reduce their largest change; every `--migrate-every` steps
// each block moves to the next node, and the edges sent to it follow it there.
//
// Node 0 then gathers the grid, runs the plain sequential loop on the same problem, and
// prints the checksums, both times and OK when the grids and the residual histories are
// bitwise equal and every block moved as often as asked (MISMATCH and exit status 1 otherwise).
#include <squall/arrays.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "grid.hpp"
#include "squall/apps/checksum.hpp"
#include "squall/apps/options.hpp"
#include "squall/apps/phase_timer.hpp"

namespace squall::apps::jacobi {

// The element and what it uses are in a named namespace: libarrays instantiates its entry
// methods' invokers with the element type, and GCC (-Wsubobject-linkage) rejects a type from
// an anonymous namespace there when this file is compiled inside a unity file.
namespace arrays = squall::arrays;

// The run's parameters: every node parses the same command line, so every node has them.
struct Config {
  int n = 512, block = 64, blocks = 8, iterations = 200, check_every = 1, migrate_every = 0;
};
Config cfg;

enum side : int { north = 0, south = 1, west = 2, east = 3 };

// One reduction's value: the step it is about (every block gives the same one) and the
// largest change over the block.
struct Residual {
  std::int32_t iteration = 0;
  double value = 0;
};
void combine_residual(Residual& acc, const Residual& in) {
  if (acc.iteration != in.iteration) acc.iteration = -1;  // caught by the check
  acc.value = std::max(acc.value, in.value);
}

// Residuals as they come back (on every node), by iteration; reductions may finish out of order.
std::vector<double> residuals;
int reductions_seen = 0;
bool mixed_reduction = false;
void on_residual(const Residual& r) {
  if (r.iteration < 1 || r.iteration > cfg.iterations) {
    mixed_reduction = true;
  } else {
    residuals[static_cast<std::size_t>(r.iteration - 1)] = r.value;
  }
  ++reductions_seen;
}
bool reduces_after(int k) { return k % cfg.check_every == 0 || k == cfg.iterations; }

struct Block;
// The array, for the blocks to message their neighbours (the index type is spelled out: array's
// default for it needs a complete Block).
const arrays::array<Block, arrays::index2d>* blocks = nullptr;

struct Block : arrays::element<arrays::index2d> {
  int b = 0;                   // block side
  std::vector<double> u, f;    // u: (b+2)^2 with a one-point halo; f: b^2
  std::array<std::array<std::vector<double>, 4>, 2> ghost;  // by step parity, by side
  std::array<int, 2> have{0, 0};                             // edges held, by step parity
  std::int32_t step = 0;                                     // steps done

  std::size_t at(int i, int j) const { return static_cast<std::size_t>(i) * (b + 2) + j; }

  // Broadcast: set up from the index and send the edges of step 0.
  void start() {
    b = cfg.block;
    const int i0 = this_index()[0] * b, j0 = this_index()[1] * b;
    u.assign(static_cast<std::size_t>(b + 2) * (b + 2), 0.0);
    f.assign(static_cast<std::size_t>(b) * b, 0.0);
    for (int i = 0; i < b; ++i) {
      for (int j = 0; j < b; ++j) {
        u[at(i + 1, j + 1)] = initial_value(i0 + i, j0 + j);
        f[static_cast<std::size_t>(i) * b + j] = source_value(i0 + i, j0 + j, cfg.n);
      }
    }
    send_edges();
    advance();
  }

  // A neighbour's edge of step k, for this block's `to` side.
  void edge(std::int32_t k, std::int32_t to, const std::vector<double>& values) {
    ghost[k & 1][to] = values;
    ++have[k & 1];
    advance();
  }

  // Sent to itself before migrating: steps it already holds every edge of run on arrival.
  void resume() { advance(); }

  std::vector<double> values() const {
    std::vector<double> out(static_cast<std::size_t>(b) * b);
    for (int i = 0; i < b; ++i)
      std::memcpy(&out[static_cast<std::size_t>(i) * b], &u[at(i + 1, 1)], b * sizeof(double));
    return out;
  }

  template <class A>
  void serialize(A& ar) {
    ar(b, u, f, ghost, have, step);
  }

 private:
  void send_edges() {
    const int bi = this_index()[0], bj = this_index()[1], nb = cfg.blocks;
    std::vector<double> top(&u[at(1, 1)], &u[at(1, 1)] + b), bottom(&u[at(b, 1)], &u[at(b, 1)] + b);
    std::vector<double> left(static_cast<std::size_t>(b)), right(static_cast<std::size_t>(b));
    for (int i = 0; i < b; ++i) {
      left[static_cast<std::size_t>(i)] = u[at(i + 1, 1)];
      right[static_cast<std::size_t>(i)] = u[at(i + 1, b)];
    }
    const arrays::array<Block>& a = *blocks;
    a[{(bi + nb - 1) % nb, bj}].call<&Block::edge>(step, std::int32_t{south}, top);
    a[{(bi + 1) % nb, bj}].call<&Block::edge>(step, std::int32_t{north}, bottom);
    a[{bi, (bj + nb - 1) % nb}].call<&Block::edge>(step, std::int32_t{east}, left);
    a[{bi, (bj + 1) % nb}].call<&Block::edge>(step, std::int32_t{west}, right);
  }

  // Runs every step whose edges are all here (none before start: a neighbour's first edges
  // may come before the broadcast does).
  void advance() {
    while (b > 0 && step < cfg.iterations && have[step & 1] == 4) {
      compute();
      if (reduces_after(step)) {
        contribute(Residual{step, last_change}, arrays::custom<&combine_residual>(),
                   arrays::on_every_node<&on_residual>());
      }
      if (step == cfg.iterations) return;
      send_edges();
      if (cfg.migrate_every > 0 && step % cfg.migrate_every == 0 && squall::nodes() > 1) {
        migrate_me((squall::node() + 1) % squall::nodes());
        (*blocks)[this_index()].call<&Block::resume>();
        return;  // the move happens when this method returns
      }
    }
  }

  // Step `step` -> step + 1, with the edges of step `step`.
  void compute() {
    auto& g = ghost[step & 1];
    for (int k = 0; k < b; ++k) {
      u[at(0, k + 1)] = g[north][static_cast<std::size_t>(k)];
      u[at(b + 1, k + 1)] = g[south][static_cast<std::size_t>(k)];
      u[at(k + 1, 0)] = g[west][static_cast<std::size_t>(k)];
      u[at(k + 1, b + 1)] = g[east][static_cast<std::size_t>(k)];
    }
    next.resize(u.size());
    double worst = 0;
    for (int i = 1; i <= b; ++i) {
      const double* up = &u[at(i - 1, 0)];
      const double* row = &u[at(i, 0)];
      const double* down = &u[at(i + 1, 0)];
      const double* fr = &f[static_cast<std::size_t>(i - 1) * b];
      double* out = &next[at(i, 0)];
      for (int j = 1; j <= b; ++j) {
        out[j] = relax(up[j], down[j], row[j - 1], row[j + 1], fr[j - 1]);
        worst = std::max(worst, std::fabs(out[j] - row[j]));
      }
    }
    u.swap(next);
    last_change = worst;
    have[step & 1] = 0;
    ++step;
  }

  std::vector<double> next;  // scratch, not carried when migrating
  double last_change = 0;
};

}  // namespace squall::apps::jacobi

namespace {

namespace jacobi = squall::apps::jacobi;
using namespace squall::apps::jacobi;
using squall::apps::Options;
using squall::apps::seconds_since;

constexpr const char* kUsage =
    "usage: squallrun -n N arrays_jacobi [--small] [--grid 512] [--block 64] [--iterations 200]\n"
    "                                    [--check-every 1] [--migrate-every 0]\n"
    "  --grid n          the grid is n x n points (periodic)\n"
    "  --block b         each element holds a b x b block (b divides n)\n"
    "  --check-every c   reduce the largest change every c iterations (and after the last)\n"
    "  --migrate-every K move every block to the next node every K iterations (0: never)\n"
    "  --small           64 x 64 grid in blocks of 16, 30 iterations (for tests)\n";

int run(Options& options) {
  const bool small = options.flag("small");
  cfg.n = options.count_as<int>("grid", small ? 64 : 512);
  cfg.block = options.count_as<int>("block", small ? 16 : 64);
  cfg.iterations = options.count_as<int>("iterations", small ? 30 : 200);
  cfg.check_every = options.count_as<int>("check-every", 1);
  cfg.migrate_every = options.count_as<int>("migrate-every", 0);
  options.finish();
  // --grid 0 ended in block_home ("bound 0 in dimension 0"), status 1, once a node.
  if (cfg.n < 1) throw squall::apps::OptionError("--grid must be at least 1");
  if (cfg.block < 1 || cfg.n % cfg.block != 0) throw squall::apps::OptionError("--block must divide --grid");
  if (cfg.iterations < 1 || cfg.check_every < 1)
    throw squall::apps::OptionError("--iterations and --check-every must be at least 1");
  cfg.blocks = cfg.n / cfg.block;
  residuals.assign(static_cast<std::size_t>(cfg.iterations), -1.0);
  int expected_reductions = 0;
  for (int k = 1; k <= cfg.iterations; ++k) expected_reductions += reduces_after(k) ? 1 : 0;

  squall::init();
  const int me = squall::node(), nodes = squall::nodes();
  const arrays::index2d bounds{cfg.blocks, cfg.blocks};
  const auto a = arrays::array<Block>::create(arrays::block_home(bounds));
  blocks = &a;
  for (int i = 0; i < cfg.blocks; ++i)
    for (int j = 0; j < cfg.blocks; ++j)
      if ((i * cfg.blocks + j) % nodes == me) a.insert({i, j});  // each at its home
  arrays::quiesce();

  squall::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  if (me == 0) a.broadcast<&Block::start>();
  arrays::run_until([&] { return reductions_seen == expected_reductions; });
  const double parallel_s = seconds_since(t0);
  arrays::quiesce();

  // The grid, block by block, to node 0: ask, run every scheduler, then take the answers.
  std::vector<arrays::future<std::vector<double>>> parts;
  if (me == 0)
    for (int i = 0; i < cfg.blocks; ++i)
      for (int j = 0; j < cfg.blocks; ++j) parts.push_back(a[{i, j}].request<&Block::values>());
  arrays::quiesce();
  const arrays::scheduler_counts c = arrays::counts();
  const std::array<std::uint64_t, 4> mine{c.sent, c.migrations_in, c.forwarded, c.routing_updates};
  std::array<std::uint64_t, 4> total{};
  squall::allreduce(std::span<const std::uint64_t>(mine), std::span<std::uint64_t>(total));

  bool ok = true;
  if (me == 0) {
    std::vector<double> grid(static_cast<std::size_t>(cfg.n) * cfg.n);
    const int b = cfg.block;
    for (int i = 0; i < cfg.blocks; ++i) {
      for (int j = 0; j < cfg.blocks; ++j) {
        const std::vector<double> part = parts[static_cast<std::size_t>(i * cfg.blocks + j)].get();
        for (int r = 0; r < b; ++r)
          std::memcpy(&grid[static_cast<std::size_t>(i * b + r) * cfg.n + j * b],
                      &part[static_cast<std::size_t>(r) * b], b * sizeof(double));
      }
    }
    const auto t1 = std::chrono::steady_clock::now();
    std::vector<double> reference_residuals;
    const std::vector<double> reference = jacobi::solve_sequential(cfg.n, cfg.iterations, reference_residuals);
    const double sequential_s = seconds_since(t1);

    // The residuals the reductions reported must be the reference's, bit for bit.
    bool residuals_equal = !mixed_reduction;
    double last_residual = -1;
    for (int k = 1; k <= cfg.iterations; ++k) {
      if (!reduces_after(k)) continue;
      const double got = residuals[static_cast<std::size_t>(k - 1)];
      const double want = reference_residuals[static_cast<std::size_t>(k - 1)];
      residuals_equal = residuals_equal && std::memcmp(&got, &want, sizeof got) == 0;
      last_residual = got;
    }
    const bool grid_equal = std::memcmp(grid.data(), reference.data(), grid.size() * sizeof(double)) == 0;
    double max_diff = 0;
    for (std::size_t k = 0; k < grid.size(); ++k) max_diff = std::max(max_diff, std::fabs(grid[k] - reference[k]));
    // Every block moves after each K-th step but the last: an exact count.
    const std::uint64_t moves = nodes > 1 && cfg.migrate_every > 0 ? (cfg.iterations - 1) / cfg.migrate_every : 0;
    const std::uint64_t expected_migrations = moves * static_cast<std::uint64_t>(cfg.blocks * cfg.blocks);
    ok = grid_equal && residuals_equal && total[1] == expected_migrations;

    std::printf("arrays_jacobi: %dx%d periodic grid, %dx%d blocks of %dx%d, %d iterations, %d nodes, "
                "residual every %d, migrate every %d\n",
                cfg.n, cfg.n, cfg.blocks, cfg.blocks, cfg.block, cfg.block, cfg.iterations, nodes, cfg.check_every,
                cfg.migrate_every);
    std::printf("residual after the last iteration %.17g (reference %.17g), %d reductions, history %s\n",
                last_residual, reference_residuals.back(), reductions_seen,
                residuals_equal ? "bitwise equal" : "DIFFERS");
    std::printf("messages %llu, migrations %llu (expected %llu), forwarded %llu, routing updates %llu\n",
                static_cast<unsigned long long>(total[0]), static_cast<unsigned long long>(total[1]),
                static_cast<unsigned long long>(expected_migrations), static_cast<unsigned long long>(total[2]),
                static_cast<unsigned long long>(total[3]));
    std::printf("time: arrays %.6f s, sequential loop %.6f s, ratio %.2f\n", parallel_s, sequential_s,
                parallel_s / sequential_s);
    std::printf("checksum %016llx reference %016llx, max |difference| %.3g, grid %s\n",
                static_cast<unsigned long long>(jacobi::grid_checksum(grid)),
                static_cast<unsigned long long>(jacobi::grid_checksum(reference)), max_diff,
                grid_equal ? "bitwise equal" : "DIFFERS");
    std::fflush(stdout);
  }
  blocks = nullptr;
  squall::finalize();
  if (me == 0) std::printf("%s\n", ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return squall::apps::run_program(argc, argv, "arrays_jacobi", kUsage, &run); }
