// SPDX-License-Identifier: BSD-3-Clause
// Pokes (common/poke.hpp, runtime/waiting.cpp): a waiter about to sleep while a peer of this
// host has not taken its packets pokes the peer's main thread if the kernel shows it running;
// the peer's handler yields the processor to the peer's progress thread. Run on 2 nodes with
// SQUALL_SPIN_US=0, so that every wait sleeps (and so pokes) at once, and again with
// SQUALL_POKE=0, which must poke nothing.
#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <squall/squall.hpp>

namespace am = squall::am;

namespace {

bool pokes_on() {
  const char* e = std::getenv("SQUALL_POKE");
  return e == nullptr || std::string(e) != "0";
}

std::atomic<int> served{0};
int on_serve(am::token&, int x) {
  served.fetch_add(1);
  return x + 1;
}

struct poke_counts {
  std::uint64_t sent, taken;
};
poke_counts counts_now() {
  const auto s = squall::stats::take();
  return {s.get("shm.pokes"), s.get("progress.pokes_taken")};
}

TEST(Pokes, AComputingPeerIsPokedAndItsProgressThreadServes) {
  ASSERT_EQ(squall::nodes(), 2);
  const int me = squall::node();
  constexpr int calls = 20;
  served.store(0);
  squall::barrier();
  const poke_counts before = counts_now();
  if (me == 0) {
    for (int i = 0; i < calls; ++i) EXPECT_EQ(am::call<on_serve>(1, i), i + 1);
  } else {
    // Computes without entering the library until every request was served: the main
    // thread runs throughout, so node 0's waits, which sleep at once, poke it.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (served.load() < calls && std::chrono::steady_clock::now() < give_up) {
    }
    EXPECT_EQ(served.load(), calls);
  }
  const poke_counts after = counts_now();
  squall::barrier();
  const std::uint64_t sent = after.sent - before.sent, taken = after.taken - before.taken;
  // A poke pending when the next arrives is taken once (SIGURG does not queue).
  const auto sent_total = static_cast<std::uint64_t>(squall::allreduce(static_cast<double>(sent)));
  const auto taken_total = static_cast<std::uint64_t>(squall::allreduce(static_cast<double>(taken)));
  if (pokes_on()) {
    if (me == 0) {
      EXPECT_GE(sent, 1u);
    }
    EXPECT_GE(taken_total, 1u);
    EXPECT_LE(taken_total, sent_total);
  } else {
    EXPECT_EQ(sent_total, 0u);
    EXPECT_EQ(taken_total, 0u);
  }
}

// A peer whose main thread sleeps in a system call is not poked: its processor is free for
// its progress thread, and a signal would cut short a sleep that SA_RESTART does not restart.
TEST(Pokes, ASleepingPeerIsNotPokedAndSleepsItsFullTime) {
  ASSERT_EQ(squall::nodes(), 2);
  const int me = squall::node();
  constexpr int calls = 20;
  served.store(0);
  squall::barrier();
  const poke_counts before = counts_now();
  if (me == 0) {
    for (int i = 0; i < calls; ++i) EXPECT_EQ(am::call<on_serve>(1, i), i + 1);
  } else {
    const timespec span{0, 300'000'000};
    timespec left{};
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(nanosleep(&span, &left), 0) << "interrupted, " << left.tv_nsec << " ns left";
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(300));
    EXPECT_EQ(served.load(), calls) << "not served while the program slept";
  }
  const poke_counts after = counts_now();
  squall::barrier();
  EXPECT_EQ(after.taken - before.taken, 0u);
}

}  // namespace
