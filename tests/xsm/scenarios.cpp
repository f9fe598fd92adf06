// SPDX-License-Identifier: BSD-3-Clause
// XSM protocols failing in ways a test drives from outside (lost_node_test.cpp):
//   bulk-reduction-lost K   node K is killed by its combining operation in the middle of a
//                           reduce, after its first step's message has left
//   bulk-reduction-store    node 0 stores to the result array, which only the protocol writes
//   multiple-writer-thread  a thread of each node stores into multiple-writer pages without
//                           pause while the program thread passes barriers
#include <signal.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>
#include <squall/xsm.hpp>
#include <squall/xsm/bulk_reduction.hpp>
#include <squall/xsm/multiple_writer.hpp>

namespace {

// One of the barriers finds a block the writer dirtied after its release: the node must end
// with a message (before, the barrier dropped the block under the store, and the next one
// raised it over stale bytes, so the node read the other nodes' old values for good).
int multiple_writer_thread() {
  constexpr std::size_t page_words = 512, pages = 16;
  squall::xsm::multiple_writer mw;
  auto* data = squall::xsm::alloc<std::uint64_t>(pages * page_words, mw);
  std::atomic<bool> stop{false};
  const auto slot = static_cast<std::size_t>(squall::node());
  std::thread writer([&] {
    for (std::uint64_t k = 1; !stop.load(std::memory_order_relaxed); ++k) {
      for (std::size_t p = 0; p < pages; ++p) data[p * page_words + slot] = k;
    }
  });
  for (int i = 0; i < 20000; ++i) squall::tsm::barrier();
  stop = true;
  writer.join();
  squall::xsm::free(data);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const int victim = argc > 2 ? std::atoi(argv[2]) : 1;
  squall::runtime rt(&argc, &argv);
  if (mode == "multiple-writer-thread") return multiple_writer_thread();
  if (mode != "bulk-reduction-lost" && mode != "bulk-reduction-store") return 2;
  squall::xsm::bulk_reduction red;
  double* total = squall::xsm::alloc<double>(4096, red);
  if (mode == "bulk-reduction-store") {
    if (squall::node() == 0) total[1] = 1.0;
    squall::barrier();
  }
  const std::vector<double> mine(4096, 1.0);
  const int me = squall::node();
  const auto dying_sum = [me, victim](double a, double b) {
    if (me == victim) raise(SIGKILL);
    return a + b;
  };
  red.reduce(std::span<const double>(mine), squall::op::sum{});  // a whole one first
  red.reduce(std::span<const double>(mine), dying_sum);
  squall::xsm::free(total);
  return 0;
}
