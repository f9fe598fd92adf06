// SPDX-License-Identifier: BSD-3-Clause
// TSM misuse that ends the node, one node, each death test in a fresh process: touching
// memory after tsm::free, or memory the node does not hold after squall::finalize, names the
// cause.
#include <gtest/gtest.h>

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

}  // namespace
