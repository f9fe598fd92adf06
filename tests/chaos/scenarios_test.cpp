// SPDX-License-Identifier: BSD-3-Clause
// Misuse that cannot be reported to the caller ends the job with a message naming the cause:
// runs chaos_scenarios under squallrun and reads what it prints.
#include <gtest/gtest.h>

#include "run_command.hpp"

#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

using squall::test::count_of;
using squall::test::report;
using squall::test::run;

std::string job(int nodes, const std::string& scenario) {
  return std::string(SQUALLRUN_PATH) + " -n " + std::to_string(nodes) + " " + SCENARIOS_PATH + " " + scenario;
}

TEST(Scenarios, SameTypeEverywhereSucceeds) {
  const auto o = run(job(4, "same-type"));
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("node 3: scenario finished"), std::string::npos) << o.output;
}

TEST(Scenarios, DifferentElementTypesOnDifferentNodesAreNamed) {
  // Element sizes are equal (double and int64): only the type check can find it.
  for (const int nodes : {2, 4}) {
    const auto o = run(job(nodes, "type-mismatch"));
    EXPECT_NE(o.status, 0) << o.output;
    EXPECT_NE(o.output.find("element type"), std::string::npos) << o.output;
    EXPECT_EQ(o.output.find("scenario finished"), std::string::npos) << o.output;
  }
}

// A node that skips, adds or swaps an executor call ends the job (not a hang: without the
// check the nodes would wait in the call for ever), with a message naming both nodes' calls.
struct out_of_step {
  std::string scenario;
  std::vector<std::string> named;  // what the message must say
};

void expect_named_mismatch(const out_of_step& c) {
  for (const int nodes : {2, 4}) {
    const auto o = run(job(nodes, c.scenario));
    EXPECT_FALSE(o.hung) << c.scenario << " on " << nodes << " nodes:\n" << report(o);
    EXPECT_NE(o.status, 0) << c.scenario << " on " << nodes << " nodes:\n" << o.output;
    EXPECT_NE(o.output.find("executor calls out of step"), std::string::npos) << c.scenario << ":\n" << o.output;
    for (const auto& w : c.named) EXPECT_NE(o.output.find(w), std::string::npos) << w << " in " << c.scenario << ":\n" << o.output;
    EXPECT_EQ(o.output.find("scenario finished"), std::string::npos) << o.output;
  }
}

TEST(Scenarios, SameExecutorCallsEverywhereSucceed) {
  for (const int nodes : {2, 4}) {
    const auto o = run(job(nodes, "same-calls"));
    EXPECT_EQ(o.status, 0) << o.output;
    EXPECT_EQ(count_of(o.output, "scenario finished"), nodes) << o.output;
  }
}

TEST(Scenarios, ANodeThatSkipsAGatherIsNamed) {
  expect_named_mismatch({"skip-gather", {"is gather (schedule", "waits for node 1", "a barrier"}});
}

TEST(Scenarios, ANodeThatAddsAScatterIsNamed) {
  expect_named_mismatch({"add-scatter", {"gather (schedule", " scatter (schedule"}});
}

TEST(Scenarios, ScatterWhereOthersGatherIsNamed) {
  expect_named_mismatch({"scatter-for-gather", {"gather (schedule", "scatter_op (schedule"}});
}

// Bad input on one node is refused there only (README: CHAOS's bad input); the message the
// other nodes end the job with names that likely cause.
TEST(Scenarios, ACallThatThrewOnOneNodeIsNamedAsALikelyCause) {
  expect_named_mismatch({"short-data", {"node 1: gather threw", "waits for node 1",
                                        "A call that threw squall::usage_error on one node only"}});
}

TEST(Scenarios, ScatterAppendWhereOthersGatherIsNamed) {
  expect_named_mismatch({"append-for-gather", {"gather (schedule", "scatter_append"}});
}

}  // namespace
