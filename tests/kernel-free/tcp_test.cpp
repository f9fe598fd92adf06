// The TCP transport as a user meets it, on one host (every pair of nodes over loopback TCP,
// squallrun --transport tcp): strangers, garbage and a wrong secret on a node's port are
// refused and counted while the job goes on; a node with the wrong secret cannot join; a
// peer that never connects times out with the node named; a node that leaves is reported
// by every other node within seconds.
#include <gtest/gtest.h>

#include "run_command.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace {

using squall::test::count_of;
using squall::test::run;

// Fixed ports (node k on base + k) so that the strangers know where to knock; derived from
// the pid, below the kernel's ephemeral range, so that concurrent tests do not collide.
std::string tcp_job(int nodes) {
  const int base = 10000 + (::getpid() % 2000) * 10;
  return "SQUALL_TCP_PORT=" + std::to_string(base) + " " + SQUALLRUN_PATH + " -n " + std::to_string(nodes) +
         " --transport tcp ";
}
const std::string scenarios = TCP_SCENARIOS_PATH;

TEST(Tcp, CleanRunSaysGoodbye) {
  const auto o = run(tcp_job(4) + "--stats " + scenarios + " exchange");
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_EQ(count_of(o.output, "exchange done"), 4) << o.output;
  EXPECT_EQ(count_of(o.output, "was lost"), 0) << o.output;
  EXPECT_EQ(count_of(o.output, "tcp.frames_sent"), 4) << o.output;  // the TCP transport carried it
}

TEST(Tcp, StrangersAreRefusedAndCountedAndTheJobGoesOn) {
  const auto o = run(tcp_job(3) + scenarios + " strangers");
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("stranger handshake with a wrong secret: refused"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("node 1 refused 3 connections"), std::string::npos) << o.output;
  EXPECT_EQ(count_of(o.output, "refused a TCP connection from 127.0.0.1"), 3) << o.output;
  EXPECT_EQ(count_of(o.output, "after the strangers, call returned"), 3) << o.output;
}

TEST(Tcp, NodeWithWrongSecretCannotJoin) {
  const std::string wrong(64, 'a');
  const auto o = run("SQUALL_TCP_TIMEOUT=5 " + tcp_job(2) + "sh -c 'if [ \"$SQUALL_NODE\" = 1 ]; then export SQUALL_JOB_SECRET=" +
                     wrong + "; fi; exec " + scenarios + " exchange'");
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_LT(o.seconds, 20) << o.output;
  EXPECT_NE(o.output.find("it does not know the job's secret"), std::string::npos) << o.output;  // node 0's refusal
  EXPECT_NE(o.output.find("connecting to node 0 at 127.0.0.1"), std::string::npos) << o.output;  // node 1 gives up
  EXPECT_EQ(count_of(o.output, "exchange done"), 0) << o.output;
}

TEST(Tcp, PeerThatNeverConnectsTimesOutNamingIt) {
  const auto o = run("SQUALL_TCP_TIMEOUT=2 " + tcp_job(3) + scenarios + " late-init 30");
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_LT(o.seconds, 20) << o.output;
  EXPECT_NE(o.output.find("node 1 never published its TCP endpoint"), std::string::npos) << o.output;
}

TEST(Tcp, NodeLeavingIsReportedByEveryOtherNode) {
  const auto o = run(tcp_job(4) + scenarios + " exit-early 2");
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_LT(o.seconds, LOST_NODE_SECONDS) << o.output;
  EXPECT_EQ(count_of(o.output, "node 2 was lost"), 3) << o.output;
}

}  // namespace
