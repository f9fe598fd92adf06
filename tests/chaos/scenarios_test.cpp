// Misuse that cannot be reported to the caller ends the job with a message naming the cause:
// runs chaos_scenarios under squallrun and reads what it prints.
#include <gtest/gtest.h>

#include "run_command.hpp"

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace {

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

}  // namespace
