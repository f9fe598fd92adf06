// SPDX-License-Identifier: BSD-3-Clause
// A bad value of one of libtsm's settings stops a TSM job, on 2 nodes under squallrun, with a
// message naming the variable and a non-zero exit: not a wait for ever. (SQUALL_TSM_HOLD_US
// was read first inside a message handler, whose exit then ran the program's exit handlers
// there and hung the job.) The liveness check is off, so a hang lasts until the time limit.
#include <gtest/gtest.h>

#include <string>

#include "run_command.hpp"

namespace {

using squall::test::run;

TEST(BadTsmSettings, StopTheJobWithAMessageNamingTheVariable) {
  for (const std::string env : {"SQUALL_TSM_HOLD_US=-1", "SQUALL_TSM_HOLD_US=2000000", "SQUALL_TSM_FAULT_AROUND=x",
                                "SQUALL_TSM_ONE_SIDED=2"}) {
    const auto o = run("SQUALL_LIVENESS_S=0 " + env + " " + SQUALLRUN + " -n 2 " + STATS_PROGRAM, 60);
    // 1: the node's own exit, which squallrun passes on (a hang ends in the watchdog's
    // SIGKILL: -1, and the outcome says hung).
    EXPECT_EQ(o.status, 1) << env << "\n" << o.output;
    const std::string var = env.substr(0, env.find('='));
    EXPECT_NE(o.output.find(var + " must be"), std::string::npos) << env << "\n" << o.output;
  }
}

// SQUALL_TSM_ONE_SIDED is a switch like the runtime's (SQUALL_HOME_VIEWS): it takes the same
// words, and refuses a bad one in the same words. It took 0 and 1 alone, and refused "on".
TEST(BadTsmSettings, OneSidedIsASwitchLikeTheRuntimes) {
  for (const std::string word : {"0", "1", "on", "OFF", "yes", "No", "true", "FALSE"}) {
    const auto o = run("SQUALL_LIVENESS_S=0 SQUALL_TSM_ONE_SIDED=" + word + " " + SQUALLRUN + " -n 2 " + STATS_PROGRAM, 60);
    EXPECT_EQ(o.status, 0) << word << "\n" << o.output;
  }
  const std::string bad[][2] = {{"2", "2"}, {"maybe", "maybe"}, {"' 1'", " 1"}};  // as the shell has it, as read
  for (const auto& [word, read] : bad) {
    for (const std::string var : {"SQUALL_TSM_ONE_SIDED", "SQUALL_HOME_VIEWS"}) {
      const auto o = run("SQUALL_LIVENESS_S=0 " + var + "=" + word + " " + SQUALLRUN + " -n 2 " + STATS_PROGRAM, 60);
      EXPECT_EQ(o.status, 1) << var << "=" << word << "\n" << o.output;
      EXPECT_NE(o.output.find(var + " must be 0 or 1 (or no/yes, false/true, off/on; got '" + read + "')"),
                std::string::npos)
          << var << "=" << word << "\n" << o.output;
    }
  }
}

}  // namespace
