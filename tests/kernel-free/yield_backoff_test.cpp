// SPDX-License-Identifier: BSD-3-Clause
// The periods without yields that a thread starts when its yields went to another program's
// busy threads (common/yield_backoff.hpp; used by spinning waits and by pokes): 20 ms at
// first, doubling up to 1.6 s while the other program is found again soon after a period
// ends, and back to 20 ms once it has been gone a while.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "common/yield_backoff.hpp"

namespace {

using squall::yield_backoff;
constexpr std::int64_t ms = 1'000'000;

TEST(YieldBackoff, YieldsUntilAnotherProgramTakesOne) {
  yield_backoff b;
  EXPECT_TRUE(b.may_yield(0));
  EXPECT_TRUE(b.may_yield(5'000 * ms));
}

TEST(YieldBackoff, APeriodWithoutYieldsFollowsAndEnds) {
  yield_backoff b;
  const std::int64_t t = 10'000 * ms;
  b.start(t);
  EXPECT_FALSE(b.may_yield(t));
  EXPECT_FALSE(b.may_yield(t + 20 * ms - 1));
  EXPECT_TRUE(b.may_yield(t + 20 * ms));
}

TEST(YieldBackoff, PeriodsDoubleWhileTheOtherProgramStaysUpToTheLongest) {
  yield_backoff b;
  std::int64_t t = 10'000 * ms;
  std::int64_t expected = 20 * ms;
  for (int i = 0; i < 12; ++i) {
    b.start(t);
    EXPECT_EQ(b.until - t, expected) << "period " << i;
    t = b.until + 5 * ms;  // found again just after the period ended
    expected = std::min(2 * expected, yield_backoff::max_period_ns);
  }
  EXPECT_EQ(b.period, yield_backoff::max_period_ns);
}

TEST(YieldBackoff, APeriodStartsShortAgainOnceTheOtherProgramWasGoneAWhile) {
  yield_backoff b;
  std::int64_t t = 10'000 * ms;
  for (int i = 0; i < 4; ++i) {
    b.start(t);
    t = b.until + 5 * ms;
  }
  ASSERT_EQ(b.period, 160 * ms);
  b.start(b.until + yield_backoff::still_there_ns + 1);  // gone for longer than a second
  EXPECT_EQ(b.period, 20 * ms);
}

}  // namespace
