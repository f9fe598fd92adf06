// SPDX-License-Identifier: BSD-3-Clause
// A node killed in the middle of an update (update_scenarios.cpp): the others, waiting for its
// pushes at the phase end, report it lost as soon as squallrun has seen it die (not once it has
// been silent for SQUALL_LIVENESS_S), and the job ends - no hang. A store
// to another node's block ends the job with a message naming the block and its home.
#include <gtest/gtest.h>

#include <string>

#include "run_command.hpp"

namespace {

using squall::test::count_of;
using squall::test::report;
using squall::test::run;
using squall::test::slow_endings_in;
using squall::test::slow_endings_off;

const std::string squallrun = SQUALLRUN_PATH;
const std::string scenarios = SCENARIOS_PATH;

void expect_lost_reported(const std::string& protocol) {
  const auto o = run(slow_endings_off + squallrun + " -n 4 " + scenarios + " " + protocol + " 2");
  EXPECT_FALSE(o.hung) << report(o);
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_EQ(count_of(o.output, "node 2 was lost"), 3) << o.output;
  EXPECT_EQ(count_of(o.output, "node 2 was lost (was killed by signal 9"), 3) << o.output;  // squallrun's word
  EXPECT_EQ(slow_endings_in(o.output), 0) << o.output;
}

TEST(UpdateLostNode, KilledNodeInABlockUpdateIsReported) { expect_lost_reported("block-update"); }
TEST(UpdateLostNode, KilledNodeInANodeUpdateIsReported) { expect_lost_reported("node-update"); }

// A store by a node other than the block's home ends that node with a message naming both:
// at the store to a block it has no copy of, and (recorded or faulting) no later than the next
// barrier to its ReadOnly copy.
void expect_foreign_write_named(const char* scenario) {
  const auto o = run(squallrun + " -n 2 " + scenarios + " " + scenario + " 1");
  EXPECT_FALSE(o.hung) << report(o);
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_EQ(count_of(o.output, "squall xsm: block-update: node 1 wrote block 0 (at 0x"), 1) << o.output;
  EXPECT_EQ(count_of(o.output, "homed on node 0; only a block's home writes it under block-update"), 1) << o.output;
}

TEST(UpdateMisuse, StoreByANodeOtherThanTheHomeIsNamed) { expect_foreign_write_named("foreign-write"); }
TEST(UpdateMisuse, StoreToACopyByANodeOtherThanTheHomeIsNamed) { expect_foreign_write_named("foreign-write-copy"); }

}  // namespace
