// squallrun as a user meets it: lost nodes are reported by every survivor and the launcher
// exits non-zero within seconds; bad flags, bad environment values and wire-level misuse
// end with a message naming the cause.
#include <gtest/gtest.h>

#include "run_command.hpp"

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace {

using squall::test::count_of;
using squall::test::run;

const std::string squallrun = SQUALLRUN_PATH;
const std::string scenarios = SCENARIOS_PATH;

TEST(LostNode, KilledNodeIsReportedByEveryOtherNode) {
  const auto o = run(squallrun + " -n 4 " + scenarios + " kill-node 2");
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_LT(o.seconds, LOST_NODE_SECONDS) << o.output;
  EXPECT_NE(o.output.find("squallrun: node 2 (pid"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("killed by signal 9"), std::string::npos) << o.output;
  EXPECT_EQ(count_of(o.output, "node 2 was lost"), 3) << o.output;
}

TEST(LostNode, NodeExitingWithoutFinalizeIsLost) {
  const auto o = run(squallrun + " -n 8 " + scenarios + " exit-early 5");
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_LT(o.seconds, LOST_NODE_SECONDS) << o.output;
  EXPECT_NE(o.output.find("exited without calling squall::finalize"), std::string::npos) << o.output;
  EXPECT_EQ(count_of(o.output, "node 5 was lost"), 7) << o.output;
}

TEST(WireErrors, UnregisteredHandlerIdIsNamed) {
  const auto o = run(squallrun + " -n 2 " + scenarios + " unregistered");
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("node 1: received an active message for handler id"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("from node 0"), std::string::npos) << o.output;
}

TEST(WireErrors, CollectiveMismatchIsReported) {
  const auto o = run(squallrun + " -n 3 " + scenarios + " mismatch");
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("collective mismatch"), std::string::npos) << o.output;
}

TEST(WireErrors, HandlerThatWaitsIsReported) {
  const auto o = run(squallrun + " -n 2 " + scenarios + " handler-waits");
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("a handler tried to wait"), std::string::npos) << o.output;
}

TEST(Launcher, StatsReportAtFinalize) {
  const auto o = run("SQUALL_STATS=1 " + squallrun + " -n 3 " + scenarios + " stats");
  EXPECT_EQ(o.status, 0) << o.output;
  for (int i = 0; i < 3; ++i) {
    EXPECT_NE(o.output.find("squall stats, node " + std::to_string(i) + " of 3"), std::string::npos) << o.output;
  }
  EXPECT_NE(o.output.find("am.messages_sent"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("on_hello"), std::string::npos) << o.output;
}

TEST(Launcher, BadFlagsAreRejected) {
  for (const std::string args : {"-n 0 /bin/true", "-n abc /bin/true", "-n 2", "/bin/true",
                                  "-n 2 --aggregation 0 /bin/true", "-n 2 --ring-bytes 100000 /bin/true",
                                  "-n 2 --bogus /bin/true"}) {
    const auto o = run(squallrun + " " + args);
    EXPECT_EQ(o.status, 2) << args << "\n" << o.output;
    EXPECT_NE(o.output.find("squallrun: "), std::string::npos) << args << "\n" << o.output;
  }
  const auto missing = run(squallrun + " -n 2 /nonexistent/program");
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.output.find("cannot run '/nonexistent/program'"), std::string::npos) << missing.output;
}

TEST(Launcher, BadEnvironmentValuesNameTheVariable) {
  for (const std::string env : {"SQUALL_AGGREGATION=abc", "SQUALL_AGGREGATION=0", "SQUALL_SPIN_US=-3",
                                 "SQUALL_STATS=maybe", "SQUALL_PROGRESS_THREAD=2", "SQUALL_QUIET_POLLS=-1",
                                 "SQUALL_LOCK_BIAS=on2", "SQUALL_MAILBOX_DEMOTE=2", "SQUALL_BIND=maybe"}) {
    const auto o = run(env + " " + squallrun + " -n 2 " + scenarios + " stats");
    EXPECT_NE(o.status, 0) << env;
    const std::string var = env.substr(0, env.find('='));
    EXPECT_NE(o.output.find(var + " must be"), std::string::npos) << env << "\n" << o.output;
  }
}

TEST(Launcher, ProgramWithoutLauncherIsOneNode) {
  const auto o = run(scenarios + " stats");
  EXPECT_EQ(o.status, 0) << o.output;
}

}  // namespace
