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
#include <memory>
#include <string>
#include <vector>

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

// squallrun --hosts without network namespaces: three "hosts" on three loopback addresses of
// this machine (the whole of 127/8 is local), each told its index. The nodes of a host share
// memory; each node reaches the four nodes of the other hosts over TCP.
TEST(Tcp, ThreeHostsOnLoopbackAddresses) {
  const std::string secret = run(std::string(SQUALLRUN_PATH) + " --make-secret").output.substr(0, 64);
  const int base = 10000 + (::getpid() % 2000) * 10;
  std::vector<std::unique_ptr<squall::test::background>> hosts;
  for (int h = 0; h < 3; ++h) {
    hosts.push_back(std::make_unique<squall::test::background>(
        "SQUALL_JOB_SECRET=" + secret + " SQUALL_TCP_PORT=" + std::to_string(base) + " " + SQUALLRUN_PATH +
        " -n 2 --hosts 127.0.0.1,127.0.0.2,127.0.0.3 --host-index " + std::to_string(h) + " --stats " + scenarios +
        " exchange"));
  }
  for (int h = 0; h < 3; ++h) {
    const auto o = hosts[h]->finish(120);
    EXPECT_EQ(o.status, 0) << o.output;
    EXPECT_EQ(count_of(o.output, "exchange done, call returned"), 2) << o.output;
    EXPECT_EQ(count_of(o.output, "hellos of"), 0) << o.output;  // every node heard from all six
    EXPECT_EQ(count_of(o.output, "tcp.connections                               4"), 2) << o.output;
  }
}

TEST(Tcp, HostListMistakesAreNamed) {
  const std::string secret = "SQUALL_JOB_SECRET=" + std::string(64, 'b') + " ";
  const struct {
    std::string env, args, says;
  } cases[] = {
      {"", "--hosts 127.0.0.1,127.0.0.2", "needs the same SQUALL_JOB_SECRET"},
      {secret, "--hosts 127.0.0.1,1.2.3", "'1.2.3' is not an IPv4 address"},
      {secret, "--hosts 127.0.0.1,127.0.0.1", "127.0.0.1 is listed twice"},
      {secret, "--hosts 203.0.113.1,198.51.100.1", "none of the --hosts addresses"},
      {secret, "--hosts 127.0.0.1,127.0.0.2 --host-index 2", "--host-index must be below"},
  };
  for (const auto& c : cases) {
    const std::string command = c.env + SQUALLRUN_PATH + " -n 2 " + c.args + " /bin/true";
    const auto o = run(command);
    EXPECT_EQ(o.status, 2) << command << "\n" << o.output;
    EXPECT_NE(o.output.find(c.says), std::string::npos) << command << "\n" << o.output;
  }
}

}  // namespace
