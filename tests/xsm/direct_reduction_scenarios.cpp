// SPDX-License-Identifier: BSD-3-Clause
// direct-reduction programs that fail on purpose, run by direct_reduction_lost_test under
// squallrun:
//   killed-mid-phase K   node K is killed after its stores of the second phase, before
//                        end_phase; the others wait in end_phase for its contributions
//   stray-write          node 1 writes an element of node 0's it did not give to inspect()
#include <signal.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <squall/squall.hpp>
#include <squall/xsm.hpp>
#include <squall/xsm/direct_reduction.hpp>

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  const std::string mode = argc > 1 ? argv[1] : "";
  const int victim = argc > 2 ? std::atoi(argv[2]) : 1;
  const int me = squall::node(), n = squall::nodes();
  constexpr std::size_t per_block = 512;  // doubles in a 4 KiB block, homed round robin
  squall::xsm::direct_reduction<double> red;
  double* y = squall::xsm::alloc<double>(per_block * static_cast<std::size_t>(n), red);
  if (mode == "killed-mid-phase") {
    std::vector<std::int64_t> mine;  // one element in every node's block
    for (int p = 0; p < n; ++p) mine.push_back(static_cast<std::int64_t>(per_block) * p + me);
    red.inspect(mine);
    for (int phase = 0;; ++phase) {
      for (const std::int64_t e : mine) y[e] += 1.0;
      if (phase == 1 && me == victim) raise(SIGKILL);
      red.end_phase();
    }
  } else if (mode == "stray-write") {
    red.inspect({});
    if (me == 1) y[3] = 1.0;  // block 0, node 0's
    squall::barrier();
  } else {
    std::fprintf(stderr, "usage: xsm_direct_reduction_scenarios killed-mid-phase K | stray-write\n");
    return 2;
  }
  squall::xsm::free(y);
  return 0;
}
