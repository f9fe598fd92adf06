// SPDX-License-Identifier: BSD-3-Clause
// The TCP transport as a user meets it, on one host (every pair of nodes over loopback TCP,
// squallrun --transport tcp): strangers, garbage and a wrong secret on a node's port are
// refused and counted while the job goes on; a node with the wrong secret cannot join; a
// peer that never connects times out with the node named; a node that leaves is reported
// by every other node as its connections close (not once silent for SQUALL_LIVENESS_S).
#include <gtest/gtest.h>

#include "patterns.hpp"
#include "run_command.hpp"
#include "stats_json.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using squall::test::count_of;
using squall::test::hang_s;
using squall::test::report;
using squall::test::run;
using squall::test::slow_endings_in;
using squall::test::slow_endings_off;

// Fixed ports (node k on base + k) so that the strangers know where to knock; derived from
// the pid, below the kernel's ephemeral range, so that concurrent tests do not collide.
int base_port() { return 10000 + (::getpid() % 2000) * 10; }
std::string tcp_job(int nodes) {
  const int base = base_port();
  return "SQUALL_TCP_PORT=" + std::to_string(base) + " " + SQUALLRUN_PATH + " -n " + std::to_string(nodes) +
         " --transport tcp ";
}
const std::string scenarios = TCP_SCENARIOS_PATH;

TEST(Tcp, CleanRunSaysGoodbye) {
  const auto o = run(tcp_job(4) + "--stats " + scenarios + " exchange");
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_EQ(count_of(o.output, "exchange done"), 4) << o.output;
  EXPECT_EQ(count_of(o.output, "was lost"), 0) << o.output;
  // The TCP transport carried it: every node reached its three peers over TCP.
  EXPECT_TRUE(squall::test::search(o.output, "\ntcp +bytes_received +[0-9]")) << o.output;
  EXPECT_TRUE(squall::test::search(o.output, "\n +connections +12 +3 +3 +1.00\n")) << o.output;
}

TEST(Tcp, StrangersAreRefusedAndCountedAndTheJobGoesOn) {
  const auto o = run(tcp_job(3) + scenarios + " strangers");
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("stranger handshake with a wrong secret: refused"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("node 1 refused 3 connections"), std::string::npos) << o.output;
  EXPECT_EQ(count_of(o.output, "refused a TCP connection from 127.0.0.1"), 3) << o.output;
  EXPECT_EQ(count_of(o.output, "after the strangers, call returned"), 3) << o.output;
}

// A socket connected to this host's `port`, or -1 when nothing listens there (yet).
int connect_local(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0) return fd;
  ::close(fd);
  return -1;
}

// A counter's total over the nodes, from the JSON the job wrote (SQUALL_STATS=json:FILE).
std::uint64_t counter_total(const std::string& json, const std::string& name) {
  return squall::test::stats_json(json).total(name);
}
std::string json_path(const std::string& test) { return "/tmp/squall-tcp-" + test + "-" + std::to_string(::getpid()) + ".json"; }

// `count` strangers connect to node 0 as soon as it listens and say nothing; node 1 comes a
// second later (late-init 1). The job must run, and every stranger be refused and counted.
void job_behind_silent_strangers(std::size_t count, const std::string& name) {
  const std::string json = json_path(name);
  squall::test::background job("SQUALL_TCP_TIMEOUT=10 " + tcp_job(2) + "--stats=json:" + json + " " + scenarios +
                               " late-init 1");
  std::vector<int> strangers;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (strangers.size() < count && std::chrono::steady_clock::now() < until) {
    const int fd = connect_local(base_port());
    if (fd >= 0) {
      strangers.push_back(fd);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  const auto o = job.finish(60);
  for (int fd : strangers) ::close(fd);
  ASSERT_EQ(strangers.size(), count) << o.output;
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_EQ(count_of(o.output, "exchange done, call returned"), 2) << o.output;
  EXPECT_EQ(counter_total(json, "tcp.connections_refused"), count) << o.output;
  std::remove(json.c_str());
}

// Node 1's handshake must not wait behind twenty silent strangers' (20 s each, once one at a
// time: far past the 10 s connect timeout).
TEST(Tcp, SilentStrangersDoNotHoldUpSetUp) { job_behind_silent_strangers(20, "silent"); }

// More silent strangers than handshakes may be under way at once (64): the set stays full,
// the later strangers wait in the kernel's backlog, and the oldest are dropped a few at a time
// once they have had their chance to answer. Node 1, behind all of them, still gets in.
TEST(Tcp, MoreSilentStrangersThanHandshakeSlots) { job_behind_silent_strangers(100, "crowd"); }

// A stranger in a reconnect loop sending garbage, through set-up and the run: every
// connection is refused and counted, but only the first few are named in the log.
TEST(Tcp, GarbageInAReconnectLoopKeepsTheLogShort) {
  const std::string json = json_path("garbage");
  squall::test::background job(tcp_job(2) + "--stats=json:" + json + " " + scenarios + " late-init 2");
  std::atomic<bool> stop{false};
  std::atomic<long long> sent{0};
  std::thread stranger([&] {
    const char garbage[] = "GET / HTTP/1.0\r\n\r\n";
    while (!stop.load()) {
      const int fd = connect_local(base_port());
      if (fd < 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      if (::send(fd, garbage, sizeof garbage, MSG_NOSIGNAL) > 0) ++sent;
      ::close(fd);
    }
  });
  const auto o = job.finish(60);
  stop.store(true);
  stranger.join();
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_EQ(count_of(o.output, "exchange done, call returned"), 2) << o.output;
  EXPECT_GT(sent.load(), 100) << o.output;
  EXPECT_GT(counter_total(json, "tcp.connections_refused"), 100u) << o.output;
  std::remove(json.c_str());
  EXPECT_EQ(count_of(o.output, "refused a TCP connection from"), 5) << o.output.substr(0, 4000);
  EXPECT_GE(count_of(o.output, "more TCP connection(s)"), 1) << o.output.substr(0, 4000);
  EXPECT_LT(o.output.size(), 20000u) << o.output.substr(0, 4000);
}

TEST(Tcp, NodeWithWrongSecretCannotJoin) {
  const std::string wrong(64, 'a');
  const auto o = run("SQUALL_TCP_TIMEOUT=5 " + tcp_job(2) + "sh -c 'if [ \"$SQUALL_NODE\" = 1 ]; then export SQUALL_JOB_SECRET=" +
                     wrong + "; fi; exec " + scenarios + " exchange'");
  EXPECT_FALSE(o.hung) << report(o);
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("it does not know the job's secret"), std::string::npos) << o.output;  // node 0's refusal
  // Node 1 tries again until its connect timeout, then gives up.
  EXPECT_NE(o.output.find("could not connect to node 0 at 127.0.0.1"), std::string::npos) << o.output;
  EXPECT_EQ(count_of(o.output, "exchange done"), 0) << o.output;
}

TEST(Tcp, PeerThatNeverConnectsTimesOutNamingIt) {
  const auto o = run("SQUALL_TCP_TIMEOUT=2 " + tcp_job(3) + scenarios + " late-init 30");
  EXPECT_FALSE(o.hung) << report(o);
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("node 1 never published its TCP endpoint"), std::string::npos) << o.output;
}

// The silence limit is far past the deadline for a hang: it cannot be what noticed.
TEST(Tcp, NodeLeavingIsReportedByEveryOtherNode) {
  const auto o = run(slow_endings_off + tcp_job(4) + scenarios + " exit-early 2");
  EXPECT_FALSE(o.hung) << report(o);
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_EQ(count_of(o.output, "node 2 was lost"), 3) << o.output;
  EXPECT_EQ(slow_endings_in(o.output), 0) << o.output;
}

// squallrun --hosts without network namespaces: three "hosts" on three loopback addresses of
// this machine (the whole of 127/8 is local), each told its index. The nodes of a host share
// memory; each node reaches the four nodes of the other hosts over TCP.
TEST(Tcp, ThreeHostsOnLoopbackAddresses) {
  const std::string secret = run(std::string(SQUALLRUN_PATH) + " --make-secret").output.substr(0, 64);
  const int base = 10000 + (::getpid() % 2000) * 10;
  const std::string json = json_path("hosts");  // written by node 0, on the first host
  std::vector<std::unique_ptr<squall::test::background>> hosts;
  for (int h = 0; h < 3; ++h) {
    hosts.push_back(std::make_unique<squall::test::background>(
        "SQUALL_JOB_SECRET=" + secret + " SQUALL_TCP_PORT=" + std::to_string(base) + " " + SQUALLRUN_PATH +
        " -n 2 --hosts 127.0.0.1,127.0.0.2,127.0.0.3 --host-index " + std::to_string(h) + " --stats=json:" + json +
        " " + scenarios + " exchange"));
  }
  for (int h = 0; h < 3; ++h) {
    const auto o = hosts[h]->finish(120);
    EXPECT_EQ(o.status, 0) << o.output;
    EXPECT_EQ(count_of(o.output, "exchange done, call returned"), 2) << o.output;
    EXPECT_EQ(count_of(o.output, "hellos of"), 0) << o.output;  // every node heard from all six
  }
  // Every node reached the four nodes of the other hosts over TCP.
  EXPECT_EQ(squall::test::stats_json(json).counters["tcp.connections"], std::vector<std::uint64_t>(6, 4));
  std::remove(json.c_str());
}

// When the kernel gives up a connect whose SYNs go unanswered: tcp_syn_retries resends, 1 s
// after the first SYN and then each twice as long after the last, and a last wait as long
// again (127 s for the default 6).
int kernel_gives_up_a_connect_s() {
  int retries = 6;
  std::ifstream("/proc/sys/net/ipv4/tcp_syn_retries") >> retries;
  return (1 << (std::clamp(retries, 0, 20) + 1)) - 1;
}

// A host that drops the SYNs (a firewall): here a listener whose accept queue is full, which
// the kernel answers by dropping them. The connect waited for the kernel's SYN retries (about
// 130 s) whatever SQUALL_TCP_TIMEOUT said; now the node gives up at the timeout, naming the
// node and the address. The kernel's ending says the same: the test's watchdog, set before
// it, calls a node that waits for the kernel hung.
TEST(Tcp, PeerThatDropsTheConnectionIsGivenUpAtTheTimeout) {
  const int base = 12000 + (::getpid() % 2000) * 10;
  const int hole = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(hole, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(base));
  sa.sin_addr.s_addr = htonl(0x7f000001);
  ASSERT_EQ(::bind(hole, reinterpret_cast<const sockaddr*>(&sa), sizeof sa), 0);
  ASSERT_EQ(::listen(hole, 0), 0);
  std::vector<int> fill;  // never accepted: the queue stays full
  for (int i = 0; i < 3; ++i) {
    fill.push_back(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    [[maybe_unused]] const int r = ::connect(fill.back(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // Only the second host's squallrun: its node 1 connects to node 0's address, the hole.
  const auto o = run("SQUALL_JOB_SECRET=" + std::string(64, 'c') + " SQUALL_TCP_TIMEOUT=3 SQUALL_TCP_PORT=" +
                         std::to_string(base) + " " + SQUALLRUN_PATH +
                         " -n 1 --hosts 127.0.0.1,127.0.0.2 --host-index 1 " + scenarios + " exchange",
                     std::min(hang_s, kernel_gives_up_a_connect_s() - 1));
  for (const int fd : fill) ::close(fd);
  ::close(hole);
  EXPECT_FALSE(o.hung) << report(o);
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("could not connect to node 0 at 127.0.0.1:" + std::to_string(base) +
                          " within the connect timeout (SQUALL_TCP_TIMEOUT): Connection timed out"),
            std::string::npos)
      << o.output;
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
