// SPDX-License-Identifier: BSD-3-Clause
// tsm_fetch: reading 64 blocks of 4 KiB that another node just wrote, one read miss after
// another (the peer), against tsm::fetch of all of them first and then the same reads. The
// home (node 1) waits in a barrier meanwhile, so it answers at once; rounds alternate.
//   faults_us   median time to read the 64 blocks by faulting on each
//   fetch_us    median time for tsm::fetch of the 64 blocks plus the reads
//   ratio       fetch_us / faults_us
#include <chrono>
#include <cstdio>
#include <vector>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>

#include "common/report.hpp"

namespace {

namespace tsm = squall::tsm;
using Clock = std::chrono::steady_clock;

constexpr std::size_t page = 4096;
constexpr std::size_t blocks = 64;
constexpr int rounds = 41;  // the first warms up; then faults and fetch alternate

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  const int me = squall::node();
  squall::bench::command_line options("tsm_fetch", argc, argv, me);
  const bool json = options.flag("--json");
  if (!options.finish()) return 2;
  if (!squall::bench::has_two_nodes("tsm_fetch", squall::nodes(), me, false)) return 1;
  auto* data = tsm::alloc<std::byte>(blocks * page, {.homes = squall::memory::home_policy::function([](std::size_t) { return 1; })});
  const std::vector<tsm::byte_range> all{{data, blocks * page}};
  std::vector<double> faults_us, fetch_us;
  bool right = true;
  for (int r = 0; r < rounds; ++r) {
    const char value = static_cast<char>(r + 1);
    if (me == 1) {  // the home writes: node 0's copies go
      for (std::size_t b = 0; b < blocks; ++b) *reinterpret_cast<volatile char*>(data + b * page) = value;
    }
    tsm::barrier();
    if (me == 0) {
      const bool fetch = r % 2 == 0;
      const auto t0 = Clock::now();
      if (fetch) tsm::fetch(all);
      for (std::size_t b = 0; b < blocks; ++b) right = right && *reinterpret_cast<volatile char*>(data + b * page) == value;
      const double us = squall::bench::seconds_since(t0) * 1e6;
      if (r > 0) (fetch ? fetch_us : faults_us).push_back(us);
    }
    tsm::barrier();
  }
  const tsm::counts c = tsm::counts_of(data);
  tsm::free(data);
  if (!right) {
    std::fprintf(stderr, "tsm_fetch: node 0 did not see node 1's writes\n");
    return 1;
  }
  if (me == 0) {
    // Every block was asked for once per fetch round, and read by a miss in the others.
    const std::uint64_t expected = blocks * static_cast<std::uint64_t>(fetch_us.size() + 1);
    if (c.fetched != expected) {
      std::fprintf(stderr, "tsm_fetch: %llu blocks fetched, expected %llu\n",
                   static_cast<unsigned long long>(c.fetched), static_cast<unsigned long long>(expected));
      return 1;
    }
    squall::bench::figures f;
    f.add("blocks", static_cast<double>(blocks));
    f.add("faults_us", squall::bench::median(faults_us));
    f.add("fetch_us", squall::bench::median(fetch_us));
    f.add("ratio", squall::bench::median(fetch_us) / squall::bench::median(faults_us));
    f.print("tsm_fetch: reading 64 blocks just written elsewhere, miss by miss vs tsm::fetch first (medians)",
            json);
  }
  return 0;
}
