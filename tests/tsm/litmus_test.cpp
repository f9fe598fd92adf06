// SPDX-License-Identifier: BSD-3-Clause
// Memory-model litmus tests on TSM memory, many rounds each, for block sizes from 4 to 64 KiB,
// in both of TSM's settings:
// - one player per node: every outcome sequential consistency forbids is absent (message
//   passing, store buffering, IRIW, write-to-read causality);
// - players as threads, two per node (roles 2k and 2k+1 on node k), sharing the node's memory
//   in hardware: what the processor's model forbids is absent (x86-64 TSO: message passing,
//   IRIW, write-to-read causality), and store buffering between two threads of one node, which
//   TSO allows, is only reported.
// Each round uses fresh values (the round number), so a stale copy anywhere shows up as an
// old number.
#include <gtest/gtest.h>

#include <sched.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <tuple>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>

namespace {

using namespace squall;

constexpr int rounds = 100;
constexpr int max_roles = 4;

// Loads and stores of the tested words: release stores and acquire loads, which x86-64
// compiles to plain moves (the hardware's own order is what is tested) while the compiler
// keeps them in program order and a race detector sees no data race between a node's threads.
void store(std::uint64_t* p, std::uint64_t v) { std::atomic_ref<std::uint64_t>(*p).store(v, std::memory_order_release); }
std::uint64_t load(std::uint64_t* p) { return std::atomic_ref<std::uint64_t>(*p).load(std::memory_order_acquire); }

// Waits for a flag in TSM memory. Yields while spinning: with more nodes than cores the
// spinning thread would otherwise keep its node's progress thread - which must answer the
// invalidation that ends the spin - off the core for a time slice.
void spin_until(std::uint64_t* flag, std::uint64_t value) {
  while (load(flag) != value) sched_yield();
}

// One round's observations, by role (a role reports 0 when it observes nothing).
using observations = std::array<std::uint64_t, max_roles>;

class Litmus : public ::testing::TestWithParam<std::tuple<std::size_t, int>> {
 protected:
  // Two words in different blocks, homed on different nodes where there are several (and
  // on a third node for y when there are three or more).
  void SetUp() override {
    const std::size_t bs = std::get<0>(GetParam());
    per_node = std::get<1>(GetParam());
    const int n = nodes();
    mem = tsm::alloc<std::uint64_t>(3 * bs / sizeof(std::uint64_t),
                                    {.block_size = bs, .homes = memory::home_policy::function([n](memory::block_index b) {
                                       return static_cast<int>((b + 1) % static_cast<std::size_t>(n));
                                     })});
    x = mem;
    y = mem + 2 * bs / sizeof(std::uint64_t);  // block 2
  }
  void TearDown() override { tsm::free(mem); }

  bool enough_nodes(int roles) const { return nodes() * per_node >= roles; }

  // Round k = 1..rounds: each role this node plays runs play(role, k) (a thread each when
  // it plays two), then every node learns every role's observation. check(k, seen) counts
  // the rounds whose outcome is forbidden.
  template <class Play, class Check>
  int run_rounds(int roles, Play play, Check check) {
    int forbidden = 0;
    for (std::uint64_t k = 1; k <= rounds; ++k) {
      observations mine{}, seen{};
      const int first = node() * per_node;
      const int last = std::min(first + per_node, roles);
      std::thread other;
      if (last - first == 2) other = std::thread([&] { mine[first + 1] = play(first + 1, k); });
      if (first < last) mine[first] = play(first, k);
      if (other.joinable()) other.join();
      allreduce(std::span<const std::uint64_t>(mine), std::span<std::uint64_t>(seen));
      forbidden += check(k, seen) ? 1 : 0;
      tsm::barrier();
    }
    return forbidden;
  }

  int per_node = 1;
  std::uint64_t* mem = nullptr;
  std::uint64_t* x = nullptr;
  std::uint64_t* y = nullptr;
};

// Role 0 writes x then the flag y; role 1 waits for the flag and must see x.
TEST_P(Litmus, MessagePassing) {
  if (!enough_nodes(2)) GTEST_SKIP() << "needs 2 players";
  const int forbidden = run_rounds(
      2,
      [&](int role, std::uint64_t k) -> std::uint64_t {
        if (role == 0) {
          store(x, k);
          store(y, k);  // the flag
          return 0;
        }
        spin_until(y, k);
        return load(x) != k ? 1 : 0;
      },
      [](std::uint64_t, const observations& seen) { return seen[1] != 0; });
  EXPECT_EQ(forbidden, 0);
}

// Each role writes its word and reads the other's: both reading old is what SC forbids, and
// what TSO allows two threads of one node (their stores wait in store buffers).
TEST_P(Litmus, StoreBuffering) {
  if (!enough_nodes(2)) GTEST_SKIP() << "needs 2 players";
  const int both_old = run_rounds(
      2,
      [&](int role, std::uint64_t k) -> std::uint64_t {
        std::uint64_t* mine = role == 0 ? x : y;
        std::uint64_t* theirs = role == 0 ? y : x;
        store(mine, k);
        return load(theirs) == k ? 1 : 2;  // 1: saw the new value, 2: the old one
      },
      [](std::uint64_t, const observations& seen) { return seen[0] == 2 && seen[1] == 2; });
  if (per_node == 1) {
    EXPECT_EQ(both_old, 0);
  } else {
    std::printf("store buffering between two threads of a node: both old in %d of %d rounds (TSO allows it)\n",
                both_old, rounds);
  }
}

// Roles 0 and 1 write x and y; roles 2 and 3 read them in opposite orders. Seeing the two
// writes in opposite orders is forbidden by SC and by TSO (multi-copy atomic).
TEST_P(Litmus, IndependentReadsOfIndependentWrites) {
  if (!enough_nodes(4)) GTEST_SKIP() << "needs 4 players";
  const int forbidden = run_rounds(
      4,
      [&](int role, std::uint64_t k) -> std::uint64_t {
        if (role == 0) store(x, k);
        if (role == 1) store(y, k);
        if (role < 2) return 0;
        std::uint64_t* a = role == 2 ? x : y;
        std::uint64_t* b = role == 2 ? y : x;
        const std::uint64_t first = load(a), second = load(b);
        return first == k && second != k ? 1 : 0;  // saw its first write new, the other old
      },
      [](std::uint64_t, const observations& seen) { return seen[2] == 1 && seen[3] == 1; });
  EXPECT_EQ(forbidden, 0);
}

// Role 0 writes x; role 1 sees it and writes y; role 2 sees y and must see x.
TEST_P(Litmus, WriteToReadCausality) {
  if (!enough_nodes(3)) GTEST_SKIP() << "needs 3 players";
  const int forbidden = run_rounds(
      3,
      [&](int role, std::uint64_t k) -> std::uint64_t {
        if (role == 0) store(x, k);
        if (role == 1) {
          spin_until(x, k);
          store(y, k);
        }
        if (role != 2) return 0;
        spin_until(y, k);
        return load(x) != k ? 1 : 0;
      },
      [](std::uint64_t, const observations& seen) { return seen[2] != 0; });
  EXPECT_EQ(forbidden, 0);
}

INSTANTIATE_TEST_SUITE_P(BlockSizes, Litmus,
                         ::testing::Combine(::testing::Values(4096, 16384, 65536), ::testing::Values(1, 2)),
                         [](const auto& p) {
                           return std::to_string(std::get<0>(p.param) / 1024) + "KiB_" +
                                  (std::get<1>(p.param) == 1 ? "NodePerPlayer" : "TwoThreadsPerNode");
                         });

}  // namespace
