// SPDX-License-Identifier: BSD-3-Clause
// direct-reduction under failure, driven from outside squallrun: a node killed in the middle
// of a phase is reported lost by every other node (each waiting in end_phase for its
// contributions) as soon as squallrun has seen it die, with no hang; a store to an element
// the node neither owns nor gave to inspect() ends the job with a message naming the block
// and its owner.
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

TEST(DirectReductionLost, NodeKilledMidPhaseIsReportedByTheOthers) {
  const auto o = run(slow_endings_off + squallrun + " -n 4 " + scenarios + " killed-mid-phase 2");
  EXPECT_FALSE(o.hung) << report(o);
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_EQ(count_of(o.output, "node 2 was lost"), 3) << o.output;
  EXPECT_EQ(count_of(o.output, "node 2 was lost (was killed by signal 9"), 3) << o.output;  // squallrun's word
  EXPECT_EQ(slow_endings_in(o.output), 0) << o.output;
}

TEST(DirectReductionLost, StrayWriteEndsTheJobWithAMessage) {
  const auto o = run(squallrun + " -n 2 " + scenarios + " stray-write");
  EXPECT_FALSE(o.hung) << report(o);
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("node 1: a write of block 0 of a direct_reduction array, owned by node 0, which holds no "
                          "element this node gave to inspect()"),
            std::string::npos)
      << o.output;
}

}  // namespace
