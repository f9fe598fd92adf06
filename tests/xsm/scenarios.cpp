// SPDX-License-Identifier: BSD-3-Clause
// XSM protocols failing in ways a test drives from outside (lost_node_test.cpp):
//   bulk-reduction-lost K   node K is killed by its combining operation in the middle of a
//                           reduce, after its first step's message has left
//   bulk-reduction-store    node 0 stores to the result array, which only the protocol writes
#include <signal.h>

#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include <squall/squall.hpp>
#include <squall/xsm.hpp>
#include <squall/xsm/bulk_reduction.hpp>

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const int victim = argc > 2 ? std::atoi(argv[2]) : 1;
  squall::runtime rt(&argc, &argv);
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
