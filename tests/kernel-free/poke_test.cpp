// SPDX-License-Identifier: BSD-3-Clause
// Pokes (common/poke.hpp, runtime/waiting.cpp): a waiter about to sleep while a peer of this
// host has not taken its packets pokes the peer's main thread if the kernel shows it running;
// the peer's handler yields the processor to the peer's progress thread (which serves a
// computing node: ActiveMessages.ProgressWhileComputing). Run on 2 nodes with
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

void spin_for(std::chrono::milliseconds span) {
  const auto end = std::chrono::steady_clock::now() + span;
  while (std::chrono::steady_clock::now() < end) {
  }
}

struct poke_counts {
  std::uint64_t sent, spared, taken;
};
poke_counts counts_now() {
  const auto s = squall::stats::take();
  return {s.get("shm.pokes"), s.get("shm.pokes_spared"), s.get("progress.pokes_taken")};
}

// Node 1 computes holding its node lock (am::run_locked), so that its progress thread cannot
// take node 0's request however soon it wakes: node 0's wait, which sleeps at once, finds the
// request not taken and node 1's main thread running, and pokes it.
TEST(Pokes, AComputingPeerIsPokedWhileItHasNotTakenTheRequest) {
  ASSERT_EQ(squall::nodes(), 2);
  const int me = squall::node();
  served.store(0);
  squall::barrier();
  const poke_counts before = counts_now();
  if (me == 0) {
    spin_for(std::chrono::milliseconds(50));  // node 1 is inside run_locked by then
    EXPECT_EQ(am::call<on_serve>(1, 7), 8);
  } else {
    am::run_locked([] { spin_for(std::chrono::milliseconds(500)); });
  }
  const poke_counts after = counts_now();
  squall::barrier();
  EXPECT_EQ(served.load(), me == 1 ? 1 : 0);
  // Node 0's pokes to node 1, and those node 1 took in its lock. Not compared with each other:
  // a poke pending when the next arrives is taken once (SIGURG does not queue), and one sent
  // in the barrier before may be taken in this window (ThreadSanitizer defers signals).
  // A poke is spared when node 1's last one yielded to another program (a loaded machine's):
  // its pokes do not yield for a while then (common/poke.cpp).
  const double mine = static_cast<double>(me == 0 ? after.sent - before.sent : after.taken - before.taken);
  const auto sent = static_cast<std::uint64_t>(squall::allreduce(me == 0 ? mine : 0.0));
  const auto taken = static_cast<std::uint64_t>(squall::allreduce(me == 1 ? mine : 0.0));
  const auto spared = static_cast<std::uint64_t>(
      squall::allreduce(me == 0 ? static_cast<double>(after.spared - before.spared) : 0.0));
  if (pokes_on()) {
    EXPECT_GE(sent + spared, 1u);
    if (sent != 0) {
      EXPECT_GE(taken, 1u);
    }
  } else {
    EXPECT_EQ(sent + spared, 0u);
    EXPECT_EQ(taken, 0u);
  }
}

// A peer whose main thread sleeps in a system call is not poked: its processor is free for
// its progress thread, and a signal would cut short a sleep that SA_RESTART does not restart
// (without the check that the thread runs, this nanosleep returned early every time).
TEST(Pokes, ASleepingPeerIsNotPokedAndSleepsItsFullTime) {
  ASSERT_EQ(squall::nodes(), 2);
  const int me = squall::node();
  constexpr int calls = 20;
  served.store(0);
  squall::barrier();
  if (me == 0) {
    spin_for(std::chrono::milliseconds(50));  // node 1 is asleep by then
    for (int i = 0; i < calls; ++i) EXPECT_EQ(am::call<on_serve>(1, i), i + 1);
  } else {
    // A poke from node 0's barrier wait just now, sent while this thread still ran, may
    // arrive a few microseconds later: it is taken here, while computing.
    spin_for(std::chrono::milliseconds(20));
    // Asleep, in naps of 50 ms, until node 0's calls are served: only the progress thread can
    // serve them, and no nap may be cut short. (One sleep of 300 ms, expected to cover all
    // 20 calls, failed when a loaded machine gave node 0 too little time: 13 served.)
    constexpr int naps_before_a_hang = SQUALL_TEST_HANG_S * 20;
    const timespec nap{0, 50'000'000};
    int naps = 0;
    for (; served.load() < calls && naps < naps_before_a_hang; ++naps) {
      timespec left{};
      const auto t0 = std::chrono::steady_clock::now();
      ASSERT_EQ(nanosleep(&nap, &left), 0) << "nap " << naps << " interrupted, " << left.tv_nsec << " ns left";
      ASSERT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(50)) << "nap " << naps;
    }
    EXPECT_EQ(served.load(), calls) << "not served while the program slept (" << naps << " naps of 50 ms)";
  }
  squall::barrier();
}

}  // namespace
