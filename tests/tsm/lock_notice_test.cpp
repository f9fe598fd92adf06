// SPDX-License-Identifier: BSD-3-Clause
// A lock whose holder keeps it longer than SQUALL_WAIT_NOTICE_S (1 s here, set by CMake):
// the waiting node says once which lock it waits for, counts it (wait.notices), and gets the
// lock when the holder lets it go. Two nodes.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>

namespace {

using namespace squall;

TEST(LockNotice, AWaitForALockKeptLongNamesTheLock) {
  if (nodes() < 2) GTEST_SKIP() << "needs 2 nodes";
  tsm::lock_array locks(1);  // homed at node 0
  if (node() == 1) locks.acquire(0);
  tsm::barrier();
  if (node() == 0) {
    const std::uint64_t before = stats::take().counters["wait.notices"];
    testing::internal::CaptureStderr();
    locks.acquire(0);  // node 1 keeps it for 2.5 s
    const std::string said = testing::internal::GetCapturedStderr();
    locks.release(0);
    EXPECT_NE(said.find("node 0: warning: has waited 1 s for lock 0 of tsm::lock_array "), std::string::npos) << said;
    EXPECT_NE(said.find(" (homed at node 0); still waiting (SQUALL_WAIT_NOTICE_S)"), std::string::npos) << said;
    EXPECT_EQ(stats::take().counters["wait.notices"], before + 1);
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    locks.release(0);
  }
  tsm::barrier();
}

}  // namespace
