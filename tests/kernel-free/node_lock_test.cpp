// SPDX-License-Identifier: BSD-3-Clause
// The node lock's bias (runtime/node_lock.hpp): the favoured thread enters without locked
// instructions, another thread revokes the bias (membarrier) before it enters, and the
// favoured thread takes the bias back a millisecond after the last revocation. Mutual
// exclusion is checked with a read-modify-write made slow on purpose, so that two threads
// inside at once lose increments.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "runtime/node_lock.hpp"

using squall::rt::node_lock;

namespace {

// A plain counter incremented slowly: a load, a pause, a store.
void slow_increment(volatile long& counter) {
  const long v = counter;
  for (int i = 0; i < 20; ++i) squall::cpu_relax();
  counter = v + 1;
}

bool biased(node_lock& lock) {
  if (lock.bias_to_this_thread()) return true;
  return false;
}

}  // namespace

TEST(NodeLockBias, TwoThreadsCountExactlyThroughRevocations) {
  node_lock lock;
  if (!biased(lock)) GTEST_SKIP() << "no private expedited membarrier here (or ThreadSanitizer)";
  volatile long counter = 0;
  constexpr long favoured = 400'000, other = 20'000;
  std::atomic<bool> go{false};
  std::thread t([&] {
    while (!go.load()) {
    }
    for (long i = 0; i < other; ++i) {
      lock.lock();
      slow_increment(counter);
      lock.unlock();
      if (i % 1000 == 0) std::this_thread::sleep_for(std::chrono::microseconds(1500));  // lets it re-bias
    }
  });
  go.store(true);
  for (long i = 0; i < favoured; ++i) {
    lock.lock();
    lock.lock();  // re-entrant, biased or not
    slow_increment(counter);
    lock.unlock();
    lock.unlock();
  }
  t.join();
  EXPECT_EQ(counter, favoured + other);
  EXPECT_GT(lock.revocations(), 1u) << "the bias was never taken back after a revocation";
}

TEST(NodeLockBias, TryLockRefusesWhileTheFavouredThreadIsInside) {
  node_lock lock;
  if (!biased(lock)) GTEST_SKIP() << "no private expedited membarrier here (or ThreadSanitizer)";
  lock.lock();
  EXPECT_TRUE(lock.held_by_this_thread());
  bool got = true;
  std::thread([&] { got = lock.try_lock(); }).join();
  EXPECT_FALSE(got);
  EXPECT_EQ(lock.revocations(), 0u);
  lock.unlock();
  // Out now: the other thread revokes the bias and enters; the favoured thread then waits.
  std::atomic<bool> inside{false}, leave{false};
  std::thread t([&] {
    lock.lock();
    inside.store(true);
    while (!leave.load()) {
    }
    lock.unlock();
  });
  while (!inside.load()) {
  }
  EXPECT_EQ(lock.revocations(), 1u);
  EXPECT_FALSE(lock.try_lock());
  leave.store(true);
  t.join();
  lock.lock();
  EXPECT_TRUE(lock.held_by_this_thread());
  lock.unlock();
}

TEST(NodeLockBias, TakenBackOnlyAMillisecondAfterARevocation) {
  node_lock lock;
  if (!biased(lock)) GTEST_SKIP() << "no private expedited membarrier here (or ThreadSanitizer)";
  auto other_takes_it = [&] {
    std::thread([&] {
      lock.lock();
      lock.unlock();
    }).join();
  };
  auto favoured_takes_it = [&] {
    for (int i = 0; i < 3; ++i) {
      lock.lock();
      lock.unlock();
    }
  };
  other_takes_it();
  EXPECT_EQ(lock.revocations(), 1u);
  // Within the millisecond: no bias to revoke, however often the favoured thread took the
  // lock meanwhile. Only a try whose acquisitions all came within a millisecond of the
  // start of the revoking one proves it (a loaded machine may stall this thread longer),
  // so tries are repeated until one did; the others still count their revocations.
  bool within = false;
  for (int attempt = 0; attempt < 200 && !within; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    favoured_takes_it();  // a quiet millisecond: takes the bias back
    const std::uint64_t before = lock.revocations();
    const auto start = std::chrono::steady_clock::now();
    other_takes_it();
    ASSERT_EQ(lock.revocations(), before + 1) << "the bias was not taken back after a quiet millisecond";
    favoured_takes_it();
    within = std::chrono::steady_clock::now() - start < std::chrono::microseconds(900);
    other_takes_it();
    if (within) {
      EXPECT_EQ(lock.revocations(), before + 1) << "the bias came back within the millisecond";
    }
  }
  EXPECT_TRUE(within) << "no try took less than a millisecond";
  // After a quiet millisecond the favoured thread's next acquisition takes the bias back.
  const std::uint64_t before = lock.revocations();
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  favoured_takes_it();
  other_takes_it();
  EXPECT_EQ(lock.revocations(), before + 1);
}
