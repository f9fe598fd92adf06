// SPDX-License-Identifier: BSD-3-Clause
// A node lost in the middle of an XSM protocol's phase is reported by every other node as
// soon as squallrun has seen it die, with no hang, and a store the protocol forbids, or a
// multiple-writer store racing a barrier of its node, is named (scenarios.cpp).
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

// The survivors wait in a channel round of the reduction for the lost node's piece.
TEST(LostNode, KilledInTheMiddleOfABulkReductionIsReported) {
  const auto o = run(slow_endings_off + squallrun + " -n 4 " + scenarios + " bulk-reduction-lost 2");
  EXPECT_FALSE(o.hung) << report(o);
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("killed by signal 9"), std::string::npos) << o.output;
  EXPECT_EQ(count_of(o.output, "node 2 was lost"), 3) << o.output;
  EXPECT_EQ(count_of(o.output, "node 2 was lost (was killed by signal 9"), 3) << o.output;  // squallrun's word
  EXPECT_EQ(slow_endings_in(o.output), 0) << o.output;
}

// A store to memory only the protocol writes ends the job with a message naming the protocol.
TEST(BadUse, StoreToTheResultOfABulkReductionIsNamed) {
  const auto o = run(squallrun + " -n 2 " + scenarios + " bulk-reduction-store");
  EXPECT_FALSE(o.hung) << report(o);
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("squall xsm: bulk_reduction: the program stored to block 0 at 0x"), std::string::npos)
      << o.output;
}

// Under multiple-writer, a thread storing while another thread of its node passes a barrier
// ends the job with a message naming the block, not with another node's writes never seen.
TEST(BadUse, AStoreWhileAnotherThreadSynchronisesIsNamedUnderMultipleWriter) {
  const auto o = run(squallrun + " -n 2 " + scenarios + " multiple-writer-thread");
  EXPECT_FALSE(o.hung) << report(o);
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("squall xsm: multiple-writer: node "), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("was written by a thread of this node while another thread of it was at a barrier"),
            std::string::npos)
      << o.output;
}

}  // namespace
