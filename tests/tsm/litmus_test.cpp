// SPDX-License-Identifier: BSD-3-Clause
// Memory-model litmus tests on TSM memory, many rounds each, for block sizes from 4 to 64 KiB:
// message passing, store buffering, IRIW and write-to-read causality never show an outcome
// sequential consistency forbids. Each round uses fresh values (the round number), so a
// stale copy anywhere shows up as an old number.
#include <gtest/gtest.h>

#include <sched.h>

#include <cstdint>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>

namespace {

using namespace squall;

constexpr int rounds = 100;

// Waits for a flag in TSM memory. Yields while spinning: with more nodes than cores the
// spinning thread would otherwise keep its node's progress thread - which must answer the
// invalidation that ends the spin - off the core for a time slice.
void spin_until(volatile std::uint64_t* flag, std::uint64_t value) {
  while (*flag != value) sched_yield();
}

class Litmus : public ::testing::TestWithParam<std::size_t> {
 protected:
  // Two words in different blocks, homed on different nodes where there are several (and
  // on a third node for y when there are three or more).
  void SetUp() override {
    const std::size_t bs = GetParam();
    const int n = nodes();
    mem = tsm::alloc<std::uint64_t>(3 * bs / sizeof(std::uint64_t),
                                    {.block_size = bs, .homes = memory::home_policy::function([n](memory::block_index b) {
                                       return static_cast<int>((b + 1) % static_cast<std::size_t>(n));
                                     })});
    x = mem;
    y = mem + 2 * bs / sizeof(std::uint64_t);  // block 2
  }
  void TearDown() override { tsm::free(mem); }

  std::uint64_t* mem = nullptr;
  volatile std::uint64_t* x = nullptr;
  volatile std::uint64_t* y = nullptr;
};

TEST_P(Litmus, MessagePassing) {
  if (nodes() < 2) GTEST_SKIP() << "needs 2 nodes";
  int forbidden = 0;
  for (std::uint64_t k = 1; k <= rounds; ++k) {
    if (node() == 0) {
      *x = k;
      *y = k;  // the flag
    } else if (node() == 1) {
      spin_until(y, k);
      forbidden += *x != k;
    }
    tsm::barrier();
  }
  EXPECT_EQ(forbidden, 0);
}

TEST_P(Litmus, StoreBuffering) {
  if (nodes() < 2) GTEST_SKIP() << "needs 2 nodes";
  int forbidden = 0;
  for (std::uint64_t k = 1; k <= rounds; ++k) {
    std::uint64_t r = 0;
    if (node() == 0) {
      *x = k;
      r = *y;
    } else if (node() == 1) {
      *y = k;
      r = *x;
    }
    // Both reads old (below k) is the outcome SC forbids.
    const std::uint64_t saw_new = node() < 2 && r == k ? 1 : 0;
    const std::uint64_t total = allreduce(saw_new);
    forbidden += total == 0;
    tsm::barrier();
  }
  EXPECT_EQ(forbidden, 0);
}

TEST_P(Litmus, IndependentReadsOfIndependentWrites) {
  if (nodes() < 4) GTEST_SKIP() << "needs 4 nodes";
  int forbidden = 0;
  for (std::uint64_t k = 1; k <= rounds; ++k) {
    std::uint64_t first = 0, second = 0;
    const int me = node();
    if (me == 0) *x = k;
    if (me == 1) *y = k;
    if (me == 2) {
      first = *x;
      second = *y;
    }
    if (me == 3) {
      first = *y;
      second = *x;
    }
    // Node 2 saw x new and y old while node 3 saw y new and x old: the two writes seen in
    // opposite orders.
    std::uint64_t pattern[2] = {me == 2 && first == k && second != k ? 1u : 0u,
                                me == 3 && first == k && second != k ? 1u : 0u};
    std::uint64_t seen[2];
    allreduce(std::span<const std::uint64_t>(pattern), std::span<std::uint64_t>(seen));
    forbidden += seen[0] == 1 && seen[1] == 1;
    tsm::barrier();
  }
  EXPECT_EQ(forbidden, 0);
}

TEST_P(Litmus, WriteToReadCausality) {
  if (nodes() < 3) GTEST_SKIP() << "needs 3 nodes";
  int forbidden = 0;
  for (std::uint64_t k = 1; k <= rounds; ++k) {
    if (node() == 0) *x = k;
    if (node() == 1) {
      spin_until(x, k);
      *y = k;
    }
    if (node() == 2) {
      spin_until(y, k);
      forbidden += *x != k;
    }
    tsm::barrier();
  }
  EXPECT_EQ(forbidden, 0);
}

INSTANTIATE_TEST_SUITE_P(BlockSizes, Litmus, ::testing::Values(4096, 16384, 65536),
                         [](const auto& p) { return std::to_string(p.param / 1024) + "KiB"; });

}  // namespace
