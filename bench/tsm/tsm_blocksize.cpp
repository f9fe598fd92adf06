// SPDX-License-Identifier: BSD-3-Clause
// tsm_blocksize: what the stache block size (4, 16, 64 KiB) does to two sharing patterns on
// 2 nodes, the question of the TSM paper's figure 6.
//   sweep  spatial locality: node 0 writes a 4 MiB array (then holds every block), then node 1
//          reads it once in order. Timed and counted: node 1's read, one miss per block, so
//          larger blocks mean fewer misses.
//   false  false sharing: both nodes write a 256 KiB array, node k the elements i with
//          (i / 64) % 2 == k (512-byte granules: every 4 KiB page holds both nodes' data),
//          working through it side by side: they take turns, a page each, with a tsm::barrier
//          between turns, for 4 rounds. Every turn is one miss at every block size (the other
//          node wrote the block last), so a larger block moves more bytes per ping-pong.
//          Turns fix the interleaving: writers left to race are serialised by the scheduler
//          when nodes share cores, and their misses vary tenfold from trial to trial.
// Misses are read misses + write misses + upgrades of both nodes (tsm::counts_of, on an array
// allocated afresh for each trial). Each trial runs every block size; figures are medians of 7
// (--trials T).
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>

#include "common/report.hpp"

namespace {

namespace tsm = squall::tsm;
using word = std::uint64_t;

constexpr std::size_t kib[] = {4, 16, 64};  // block sizes
constexpr std::size_t sweep_words = (4u << 20) / sizeof(word);
constexpr std::size_t false_words = (256u << 10) / sizeof(word);
constexpr std::size_t granule = 64;  // words a node writes in a row: 512 bytes
constexpr std::size_t page_words = 4096 / sizeof(word);
constexpr int rounds = 4;

struct result {
  double us = 0, misses = 0;
};

// Collective: the misses of both nodes so far on the array at p.
double misses(const void* p) {
  const tsm::counts c = tsm::counts_of(p);
  return static_cast<double>(squall::allreduce<std::uint64_t>(c.read_misses + c.write_misses + c.upgrades));
}

// One trial of the sweep; false if node 1 read a wrong sum.
bool sweep(std::size_t block_size, result& r) {
  const int me = squall::node();
  word* x = tsm::alloc<word>(sweep_words, {.block_size = block_size});
  if (me == 0) {
    for (std::size_t i = 0; i < sweep_words; ++i) x[i] = i;
  }
  tsm::barrier();
  const double before = misses(x);  // node 0's write misses are not the sweep's
  word sum = 0;
  if (me == 1) {  // node 0 serves from its wait in misses() meanwhile
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < sweep_words; ++i) sum += x[i];
    r.us = squall::bench::seconds_since(t0) * 1e6;
  }
  r.misses = misses(x) - before;
  squall::broadcast(r.us, 1);
  tsm::free(x);
  return me != 1 || sum == sweep_words * (sweep_words - 1) / 2;
}

word value(int round, std::size_t i) { return static_cast<word>(round) * false_words + i + 1; }

// One trial of false sharing; false if the array does not end with every node's last round.
bool false_sharing(std::size_t block_size, result& r) {
  const int me = squall::node();
  word* x = tsm::alloc<word>(false_words, {.block_size = block_size});
  tsm::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t turn = 0; turn < 2 * false_words / page_words; ++turn) {
      if (turn % 2 == static_cast<std::size_t>(me)) {  // my half of page turn / 2
        const std::size_t page = turn / 2;
        for (std::size_t i = page * page_words; i < (page + 1) * page_words; ++i) {
          if ((i / granule) % 2 == static_cast<std::size_t>(me)) x[i] = value(round, i);
        }
      }
      tsm::barrier();
    }
  }
  r.us = squall::bench::seconds_since(t0) * 1e6;
  r.misses = misses(x);  // before the check's reads add to them
  bool right = true;
  for (std::size_t i = 0; i < false_words; ++i) right = right && x[i] == value(rounds - 1, i);
  tsm::free(x);
  return right;
}

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  const int me = squall::node();
  int trials = 7;
  squall::bench::command_line options("tsm_blocksize", argc, argv, me);
  options.positive("--trials", trials);
  const bool json_wanted = options.flag("--json");
  if (!options.finish()) return 2;
  if (!squall::bench::has_two_nodes("tsm_blocksize", squall::nodes(), me, true)) return 1;
  constexpr std::size_t sizes = std::size(kib);
  std::vector<double> sweep_us[sizes], sweep_misses[sizes], false_us[sizes], false_misses[sizes];
  bool right = true;
  for (int t = 0; t < trials; ++t) {
    for (std::size_t k = 0; k < sizes; ++k) {
      result r;
      right = sweep(kib[k] << 10, r) && right;
      sweep_us[k].push_back(r.us);
      sweep_misses[k].push_back(r.misses);
      right = false_sharing(kib[k] << 10, r) && right;
      false_us[k].push_back(r.us);
      false_misses[k].push_back(r.misses);
    }
  }
  if (squall::allreduce<int>(right ? 1 : 0, squall::op::min{}) == 0) {
    if (me == 0) std::fprintf(stderr, "tsm_blocksize: a node read wrong values\n");
    return 1;
  }
  if (me != 0) return 0;

  using squall::bench::median;
  std::printf("tsm_blocksize: 2 nodes, median of %d trials; misses = read + write + upgrades of both nodes\n", trials);
  std::printf("  block    sweep: node 1 reads 4 MiB     false sharing: 256 KiB, %d rounds of turns\n", rounds);
  std::printf("  %-6s %14s %14s %16s %14s\n", "", "us", "misses", "us", "misses");
  std::string json = "{";
  for (std::size_t k = 0; k < sizes; ++k) {
    const double figs[] = {median(sweep_us[k]), median(sweep_misses[k]), median(false_us[k]), median(false_misses[k])};
    std::printf("  %2zu KiB %14.1f %14.0f %16.1f %14.0f\n", kib[k], figs[0], figs[1], figs[2], figs[3]);
    const char* pattern[] = {"sweep", "sweep", "false", "false"};
    const char* unit[] = {"us", "misses", "us", "misses"};
    for (int j = 0; j < 4; ++j) {
      char item[80];
      std::snprintf(item, sizeof item, "%s\"%s_%zuk_%s\": %.10g", json.size() > 1 ? ", " : "", pattern[j], kib[k],
                    unit[j], figs[j]);
      json += item;
    }
  }
  if (json_wanted) std::printf("%s}\n", json.c_str());
  return 0;
}
