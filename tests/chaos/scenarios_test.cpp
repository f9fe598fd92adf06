// Misuse that cannot be reported to the caller ends the job with a message naming the cause:
// runs chaos_scenarios under squallrun and reads what it prints.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace {

struct outcome {
  int status = -1;  // exit status, or -1 if killed by a signal
  std::string output;
};

// Runs a command with a hard time limit, capturing stdout and stderr together.
outcome run(const std::string& command, int limit_s = 60) {
  outcome o;
  const std::string full = "timeout -s KILL " + std::to_string(limit_s) + " " + command + " 2>&1";
  FILE* p = popen(full.c_str(), "r");
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) o.output.append(buf, n);
  const int st = pclose(p);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return o;
}

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
