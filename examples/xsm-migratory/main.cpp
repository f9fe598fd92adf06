// SPDX-License-Identifier: BSD-3-Clause
// The migratory protocol at work: a record handed round the nodes, each node in turn reading
// and updating it. Under migratory each hand-over is one miss; under stache, two (a read
// miss, then an upgrade).
#include <cstdint>
#include <cstdio>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>
#include <squall/xsm.hpp>

#include "migratory.hpp"

struct record {
  std::uint64_t visits;
  std::uint64_t last_node;
};

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  migratory_example::migratory mig;
  auto* r = squall::xsm::alloc<record>(1, mig);  // collective: the record runs migratory
  constexpr int rounds = 100;
  for (int round = 0; round < rounds; ++round) {
    for (int turn = 0; turn < squall::nodes(); ++turn) {
      if (turn == squall::node()) {
        r->visits = r->visits + 1;  // the read takes the record writable: one miss
        r->last_node = static_cast<std::uint64_t>(squall::node());
      }
      squall::tsm::barrier();
    }
  }
  const auto misses = squall::allreduce(mig.misses.value());
  if (squall::node() == 0) {
    std::printf("%llu visits, last by node %llu; %llu migratory misses on %d nodes\n",
                static_cast<unsigned long long>(r->visits), static_cast<unsigned long long>(r->last_node),
                static_cast<unsigned long long>(misses), squall::nodes());
  }
  squall::tsm::barrier();
  squall::xsm::free(r);
}
