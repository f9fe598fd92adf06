// SPDX-License-Identifier: BSD-3-Clause
// Runs for update_lost_test: the update protocols' loop (update_pattern.hpp) on every node,
// where one node is killed in the middle of an update.
//
//   update_scenarios block-update K   node K writes its blocks in the third iteration, then dies
//   update_scenarios node-update K    instead of ending the phase: the others wait in the update
//                                     at that barrier (for its pushes) and must report it lost
//   update_scenarios foreign-write K  under block-update, node K stores to node 0's first block
//   update_scenarios foreign-write-copy K  the same store, after node K read the block (to its
//                                     ReadOnly copy: where the kernel records writes, found at
//                                     the barrier that follows)
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>
#include <squall/xsm.hpp>
#include <squall/xsm/block_update.hpp>
#include <squall/xsm/node_update.hpp>

#include "update_pattern.hpp"

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  const std::string mode = argc > 1 ? argv[1] : "";
  const int victim = argc > 2 ? std::atoi(argv[2]) : 1;
  const int me = squall::node();
  const std::size_t n = update_test::elements_for(squall::nodes());
  const squall::tsm::options homes{.homes = squall::memory::home_policy::partition()};

  std::unique_ptr<squall::xsm::protocol> upd;
  squall::xsm::node_update* elements = nullptr;
  if (mode == "foreign-write" || mode == "foreign-write-copy") {
    squall::xsm::block_update bu;
    double* z = squall::xsm::alloc<double>(n, bu, homes);
    if (me == victim && mode == "foreign-write-copy") std::printf("read %g\n", static_cast<volatile double*>(z)[0]);
    if (me == victim) z[0] = 1;
    squall::tsm::barrier();
    return 0;
  }
  if (mode == "block-update") {
    upd = std::make_unique<squall::xsm::block_update>(3);
  } else if (mode == "node-update") {
    elements = new squall::xsm::node_update(sizeof(double));
    upd.reset(elements);
  } else {
    std::fprintf(stderr, "usage: update_scenarios block-update|node-update|foreign-write|foreign-write-copy VICTIM\n");
    return 2;
  }
  double* x = squall::xsm::alloc<double>(n, *upd, homes);
  const update_test::layout where(x, n);
  update_test::write_initial(x, where);
  if (elements != nullptr) {
    const auto read = where.elements_read(me);
    elements->declare_reads(std::vector<std::int64_t>(read.begin(), read.end()));
  }
  squall::tsm::barrier();
  std::vector<double> y(n);
  for (int it = 0;; ++it) {
    for (std::size_t i = 0; i < n; ++i) {
      if (where.home[i] == me) y[i] = update_test::step(x, i, n);
    }
    squall::tsm::barrier();
    for (std::size_t i = 0; i < n; ++i) {
      if (where.home[i] == me) x[i] = y[i];
    }
    if (it == 2 && me == victim) raise(SIGKILL);
    squall::tsm::barrier();
  }
}
