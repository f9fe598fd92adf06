// SPDX-License-Identifier: BSD-3-Clause
// TSM misuse that ends the node, one node, each death test in a fresh process: touching
// memory after tsm::free, or memory the node does not hold after squall::finalize, names the
// cause.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>

namespace {

class runtime_environment : public ::testing::Environment {
 public:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");  // the memory layer starts once per process
    squall::init();
  }
  void TearDown() override { squall::finalize(); }
};
const auto* const environment = ::testing::AddGlobalTestEnvironment(new runtime_environment);

TEST(TsmDeathTest, UseOfFreedMemory) {
  EXPECT_DEATH(
      {
        auto* x = squall::tsm::alloc<int>(1000);
        volatile int* p = x;
        p[10] = 1;
        squall::tsm::free(x);
        p[10] = 2;
      },
      "in the shared-segment range but in no segment \\(memory that was freed");
}

// Before, the first runtime call of stache's fault handler threw, and the node ended with
// "terminate called after throwing ... squall::node called after squall::finalize".
TEST(TsmDeathTest, AMissAfterFinalizeSaysSo) {
  EXPECT_DEATH(
      {
        auto* x = squall::tsm::alloc<int>(1000);  // never touched: its first access faults
        squall::finalize();
        volatile int* p = x;
        (void)p[10];
      },
      "a read of block 0 of the TSM segment at 0x[0-9a-f]+ after squall::finalize");
}

// Runs f, which must throw usage_error; prints its message on standard error.
template <class F>
void say_usage_error(F&& f) {
  try {
    f();
    std::fprintf(stderr, "no usage_error\n");
  } catch (const squall::usage_error& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
}

// TSM calls after squall::finalize name themselves, not the runtime call they reached first
// ("am::run_locked called after squall::finalize"). A death test: the runtime stays stopped.
TEST(TsmDeathTest, CallsAfterFinalizeNameThemselves) {
  EXPECT_EXIT(
      {
        auto* x = squall::tsm::alloc<int>(10);
        squall::tsm::init();
        void* h = squall::tsm::malloc(100);
        squall::finalize();
        say_usage_error([] { squall::tsm::barrier(); });
        say_usage_error([] { (void)squall::tsm::malloc(10); });
        say_usage_error([&] { squall::tsm::heap_free(h); });
        say_usage_error([&] { squall::tsm::free(x); });
        say_usage_error([] { squall::tsm::lock_array locks(4); });
        say_usage_error([] { (void)squall::tsm::allreduce(1, squall::op::sum{}); });
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0),
      "tsm::barrier called after squall::finalize.*"
      "tsm::malloc called after squall::finalize.*"
      "tsm::heap_free called after squall::finalize.*"
      "tsm::free called after squall::finalize.*"
      "tsm::lock_array called after squall::finalize.*"
      "tsm::allreduce called after squall::finalize");
}

// A lock array that outlives the runtime's scope (or a static one) is destroyed after
// squall::finalize quietly, a lock held or not. Before, its destructor's fence threw
// "squall::fence called after squall::finalize" and ended the process through std::terminate.
TEST(TsmDeathTest, LockArrayDestroyedAfterFinalizeGoesQuietly) {
  EXPECT_EXIT(
      {
        {
          squall::tsm::lock_array locks(4);
          locks.acquire(2);
          locks.release(2);  // kept by this node
          locks.acquire(3);  // held at finalize
          squall::finalize();
        }
        std::fprintf(stderr, "destroyed after finalize\n");
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "destroyed after finalize");
}

}  // namespace
