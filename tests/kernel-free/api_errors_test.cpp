// SPDX-License-Identifier: BSD-3-Clause
// Misuse of the C++ API in one node: each ends in usage_error with a message naming the
// cause. One test, since the phases (before init, running, after finalize) happen in order.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <squall/squall.hpp>

#include "usage_error_of.hpp"

namespace am = squall::am;

namespace {

void on_data(am::token&, am::payload) {}
void on_int(am::token&, int) {}

using squall::test::usage_error_of;

#define EXPECT_ERROR(call, text) \
  EXPECT_NE(usage_error_of([&] { call; }).find(text), std::string::npos) << usage_error_of([&] { call; })

TEST(ApiErrors, EveryPhase) {
  EXPECT_FALSE(squall::initialized());
  EXPECT_ERROR(squall::node(), "squall::node called before squall::init");
  EXPECT_ERROR(am::send<on_int>(0, 1), "am::send called before squall::init");
  EXPECT_ERROR(squall::barrier(), "before squall::init");
  EXPECT_ERROR(squall::fence(), "before squall::init");
  const std::uint64_t one = 1;
  // The probe's: the split-phase sum's own clean-up threw again while the error unwound, and
  // the process ended (std::terminate) instead of the caller catching usage_error.
  EXPECT_ERROR(squall::allreduce_sum(std::span<const std::uint64_t>(&one, 1)), "squall::allreduce_sum called before squall::init");

  squall::init();
  EXPECT_TRUE(squall::initialized());
  EXPECT_EQ(squall::nodes(), 1);
  EXPECT_ERROR(squall::init(), "squall::init called twice");
  EXPECT_ERROR(am::send<on_int>(1, 1), "node 1 does not exist");
  EXPECT_ERROR(am::send<on_int>(-1, 1), "node -1 does not exist");
  std::vector<std::byte> big(am::max_payload() + 1);
  EXPECT_ERROR(am::send<on_data>(0, am::payload(big)), "exceeds the limit");
  EXPECT_NO_THROW(am::send<on_data>(0, am::payload(big.data(), am::max_payload())));
  bool wrote = false;
  const auto writer = [&](std::byte*) { wrote = true; };
  EXPECT_ERROR(am::send_written<on_data>(0, am::max_payload() + 1, writer), "exceeds the limit");
  EXPECT_ERROR(am::send_written<on_data>(2, 8, writer), "node 2 does not exist");
  EXPECT_FALSE(wrote);
  EXPECT_NO_THROW(am::send_written<on_data>(0, am::max_payload(), writer));
  EXPECT_TRUE(wrote);
  EXPECT_ERROR(am::bulk_send<on_data>(3, am::payload(big)), "node 3 does not exist");
  EXPECT_ERROR(am::set_aggregation(0), "outside 1..4096");
  EXPECT_ERROR(am::flush(2), "node 2 does not exist");
  int x = 0;
  EXPECT_ERROR(squall::broadcast(x, 5), "root 5 does not exist");
  squall::fence();

  squall::finalize();
  EXPECT_FALSE(squall::initialized());
  EXPECT_ERROR(squall::node(), "squall::node called after squall::finalize");
  EXPECT_ERROR(am::send<on_int>(0, 1), "after squall::finalize");
  EXPECT_ERROR(squall::allreduce_sum(std::span<const std::uint64_t>(&one, 1)), "squall::allreduce_sum called after squall::finalize");
  EXPECT_ERROR(squall::init(), "does not restart");
}

}  // namespace

// A library that refuses one node's problem on every node passes the cause on in a
// usage_error of its own: cause() is what() without the prefix, which would otherwise be
// said twice ("squall: squall: ...").
TEST(ApiErrors, CauseIsTheMessageWithoutThePrefix) {
  const squall::usage_error e("chaos::scatter_append: element 7 of 5");
  EXPECT_STREQ(e.what(), "squall: chaos::scatter_append: element 7 of 5");
  EXPECT_STREQ(e.cause(), "chaos::scatter_append: element 7 of 5");
  EXPECT_STREQ(squall::usage_error("").cause(), "");
}
