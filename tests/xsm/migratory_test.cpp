// SPDX-License-Identifier: BSD-3-Clause
// The user protocol of libxsm/README.md (examples/xsm-migratory), written outside the
// library: a block handed from node to node, read then written by one node at a time, moves
// with write permission on the read; exact counts beside stache's on the same pattern, and a
// segment holding both protocols.
#include <gtest/gtest.h>

#include <cstdint>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>
#include <squall/xsm.hpp>

#include "migratory.hpp"

namespace {

using namespace squall;
using migratory_example::migratory;

constexpr int rounds = 10;
constexpr std::size_t words = 512;  // one 4 KiB block, homed on node 0

// Each step one node adds 1 to every word (a read, then a write); the block goes round the
// nodes `rounds` times.
void pass_round(volatile std::uint64_t* data) {
  for (int r = 0; r < rounds; ++r) {
    for (int turn = 0; turn < nodes(); ++turn) {
      if (turn == node()) {
        for (std::size_t i = 0; i < words; ++i) data[i] = data[i] + 1;
      }
      tsm::barrier();
    }
  }
}

TEST(Migratory, MovesOncePerStepWithWritePermission) {
  migratory mig;
  auto* data = xsm::alloc<std::uint64_t>(words, mig);
  pass_round(data);
  // One miss per step: the read takes the block writable. The holder before node k's step is
  // node k-1 (the last node keeps it at the end); node 0 is home and lowers its own copy.
  const int n = nodes(), me = node();
  const std::uint64_t misses = mig.misses.value(), served = mig.requests_served.value(), moves = mig.moves.value(),
                      recalls = mig.recalls_answered.value();
  tsm::barrier();  // every node has its counts before any reads the data below
  EXPECT_EQ(misses, n == 1 ? 1u : static_cast<std::uint64_t>(rounds));
  EXPECT_EQ(served, me != 0 ? 0u : n == 1 ? 1u : static_cast<std::uint64_t>(rounds) * static_cast<std::uint64_t>(n));
  EXPECT_EQ(moves, me != 0 ? 0u : static_cast<std::uint64_t>(rounds) * static_cast<std::uint64_t>(n - 1));
  EXPECT_EQ(recalls, me == 0 ? 0u : me == n - 1 ? rounds - 1u : static_cast<std::uint64_t>(rounds));
  const auto expected = static_cast<std::uint64_t>(rounds) * static_cast<std::uint64_t>(nodes());
  EXPECT_EQ(data[0], expected);  // (each node's read moves the block once more)
  EXPECT_EQ(data[words - 1], expected);
  xsm::free(data);
}

TEST(Migratory, StacheMissesTwicePerStepOnTheSamePattern) {
  if (nodes() < 2) GTEST_SKIP() << "needs 2 nodes";
  auto* data = tsm::alloc<std::uint64_t>(words);
  pass_round(data);
  const tsm::counts c = tsm::counts_of(data);
  // A read miss, then an upgrade, at every step but the first: node 0's first read finds the
  // block held by nobody and gets it exclusively, and its write then needs no message.
  const std::uint64_t first = node() == 0 ? 1 : 0;
  EXPECT_EQ(c.read_misses, static_cast<std::uint64_t>(rounds));
  EXPECT_EQ(c.upgrades + c.write_misses, static_cast<std::uint64_t>(rounds) - first);
  EXPECT_EQ(c.silent_upgrades, first);
  tsm::free(data);
}

TEST(Migratory, SharesASegmentWithStache) {
  migratory mig;
  constexpr std::size_t block = 4096;
  auto* mem = static_cast<std::uint64_t*>(xsm::alloc_bytes(3 * block, {xsm::range{block, block, &mig}}));
  EXPECT_EQ(tsm::protocol_at(mem).name(), "stache");
  EXPECT_EQ(tsm::protocol_at(mem + words).name(), "migratory");
  pass_round(mem + words);  // the middle block
  if (node() == 0) mem[0] = 7;  // a stache block beside it
  tsm::barrier();
  EXPECT_EQ(mem[words], static_cast<std::uint64_t>(rounds) * static_cast<std::uint64_t>(nodes()));
  EXPECT_EQ(mem[0], 7u);
  EXPECT_EQ(mem[2 * words], 0u);
  xsm::free(mem);
}

}  // namespace
