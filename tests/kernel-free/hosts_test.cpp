// SPDX-License-Identifier: BSD-3-Clause
// One job over several hosts: three "hosts" made of network namespaces joined by veth pairs
// to a bridge (in a namespace of its own, so nothing on the real host changes), two nodes
// on each. The nodes of a host talk through shared memory (its mailbox lane included) and
// the hosts through TCP:
//   - the message and collective tests pass, started by `squallrun --hosts` on every host
//     and by `mpirun` with a hostfile (its launch agent steps into the namespaces);
//   - a host with the wrong secret is refused and the job ends with the nodes named;
//   - a stranger's garbage on a node's port is refused and counted, and the job goes on (and,
//     with UCX between the hosts, on the ports UCX's TCP transport listens on);
//   - a host whose link is cut, or whose processes are killed, is reported as lost by every
//     other node, and every squallrun exits non-zero (killed: as its connections close, not
//     once silent for SQUALL_LIVENESS_S); so is a host whose processes are stopped, once
//     silent for SQUALL_LIVENESS_S (heartbeats on idle links);
//   - a node killed before squall::init is named by every host, not at SQUALL_TCP_TIMEOUT;
//   - of two hosts cut apart, the one that says the other's node went silent is named by the
//     third host, which still hears that node.
// Needs root (to make namespaces); says so and skips otherwise.
#include <gtest/gtest.h>

#include "patterns.hpp"
#include "run_command.hpp"
#include "stats_json.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace {

using squall::test::background;
using squall::test::count_of;
using squall::test::hang_s;
using squall::test::outcome;
using squall::test::report;
using squall::test::run;
using squall::test::slow_endings_in;
using squall::test::slow_endings_off;
using clock_type = std::chrono::steady_clock;

constexpr int hosts = 3, nodes_per_host = 2, job_nodes = hosts * nodes_per_host;
const std::string build_bin = BUILD_BIN;
const std::string squallrun = SQUALLRUN_PATH;
const std::string scenarios = TCP_SCENARIOS_PATH;
const std::string kf_scenarios = SCENARIOS_PATH;

std::string address(int host) { return "10.77.0." + std::to_string(host + 1); }
std::string host_list() { return address(0) + "," + address(1) + "," + address(2); }

bool sh(const std::string& command) { return run(command, 20).status == 0; }

// The hosts share this machine's processors, which no node sees: with more nodes in all than
// processors, they are told so (SQUALL_OVERSUBSCRIBED), as one host's nodes would find.
bool processors_shared(int nodes_in_all) {
  cpu_set_t mask;
  return ::sched_getaffinity(0, sizeof mask, &mask) == 0 && nodes_in_all > CPU_COUNT(&mask);
}

// The namespaces, the bridge and the veth pairs; removed again at the end. Names carry the
// test's pid so that a leftover from a killed run never collides with this one.
class cluster {
 public:
  cluster() : prefix_("squall" + std::to_string(::getpid()) + "-") {
    if (::geteuid() != 0) {
      why_not_ = "making network namespaces needs root";
      return;
    }
    const std::string sw = ns("sw");
    bool ok = sh("ip netns add " + sw) && sh("ip -n " + sw + " link add br0 type bridge") &&
              sh("ip -n " + sw + " link set br0 up");
    made_.push_back(sw);
    for (int h = 0; h < hosts && ok; ++h) {
      const std::string host = ns(host_name(h)), veth = veth_name(h);
      ok = sh("ip netns add " + host);
      made_.push_back(host);
      ok = ok && sh("ip link add " + veth + " type veth peer name eth0 netns " + host) &&
           sh("ip link set " + veth + " netns " + sw) && sh("ip -n " + sw + " link set " + veth + " master br0 up") &&
           sh("ip -n " + host + " addr add " + address(h) + "/24 dev eth0") &&
           sh("ip -n " + host + " link set eth0 up") && sh("ip -n " + host + " link set lo up");
    }
    if (!ok) why_not_ = "could not make network namespaces and veth pairs (ip netns, veth, bridge)";
  }
  ~cluster() {
    for (const auto& n : made_) sh("ip netns del " + n);
  }
  cluster(const cluster&) = delete;
  cluster& operator=(const cluster&) = delete;

  const std::string& why_not() const { return why_not_; }
  static std::string host_name(int h) { return "h" + std::to_string(h + 1); }
  std::string ns(const std::string& name) const { return prefix_ + name; }
  std::string veth_name(int h) const { return "sq" + std::to_string(::getpid()) + "v" + std::to_string(h + 1); }
  // Runs `command` on host h (in its namespace).
  std::string on(int h, const std::string& command) const { return "ip netns exec " + ns(host_name(h)) + " " + command; }
  void cut_link(int h) const { sh("ip -n " + ns("sw") + " link set " + veth_name(h) + " down"); }
  void restore_link(int h) const { sh("ip -n " + ns("sw") + " link set " + veth_name(h) + " up"); }
  // Drops `percent` of the packets host h receives on its link (nftables, in its namespace).
  bool lose(int h, int percent) const {
    const std::string nft = "ip netns exec " + ns(host_name(h)) + " nft ";
    return sh(nft + "add table inet squall_loss") &&
           sh(nft + "'add chain inet squall_loss in { type filter hook input priority 0; }'") &&
           sh(nft + "add rule inet squall_loss in iifname eth0 numgen random mod 100 '<' " + std::to_string(percent) +
              " drop");
  }
  void stop_losing(int h) const { sh("ip netns exec " + ns(host_name(h)) + " nft delete table inet squall_loss"); }
  // Cuts hosts a and b apart, each keeping its link to the others: each sends what is meant
  // for the other to a hardware address nobody has (a static neighbour entry).
  void separate(int a, int b) const {
    for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
      sh("ip -n " + ns(host_name(from)) + " neigh replace " + address(to) + " lladdr 02:00:00:00:00:99 dev eth0 nud permanent");
    }
  }
  // Host `from` loses its route to host `to`: its connections there fail at once.
  void unroute(int from, int to) const {
    sh("ip -n " + ns(host_name(from)) + " route add unreachable " + address(to) + "/32");
  }
  void kill_host(int h) const { signal_host(h, "KILL"); }
  void stop_host(int h) const { signal_host(h, "STOP"); }
  void signal_host(int h, const std::string& sig) const {
    sh("ip netns pids " + ns(host_name(h)) + " | xargs -r kill -" + sig);
  }

 private:
  std::string prefix_;
  std::string why_not_;
  std::vector<std::string> made_;
};

// The same squallrun on every host: one job of job_nodes nodes (or `per_host` a host).
struct job {
  std::vector<std::unique_ptr<background>> parts;
  int per_host = nodes_per_host;
  clock_type::time_point since = clock_type::now();
  // The statistics of every node, written by node 0 at finalize (on the first host).
  std::string json = "/tmp/squall-hosts-" + std::to_string(::getpid()) + ".json";

  job(const cluster& c, const std::string& program, const std::vector<std::string>& env_per_host = {},
      int nodes_a_host = nodes_per_host)
      : per_host(nodes_a_host) {
    const std::string secret = run(squallrun + " --make-secret").output.substr(0, 64);
    for (int h = 0; h < hosts; ++h) {
      const std::string env = h < static_cast<int>(env_per_host.size()) ? env_per_host[h] : "";
      parts.push_back(std::make_unique<background>(
          "SQUALL_JOB_SECRET=" + secret + " SQUALL_TEST_NODES=" + std::to_string(hosts * per_host) + " " +
          (processors_shared(hosts * per_host) ? "SQUALL_OVERSUBSCRIBED=1 " : "") + env + " " +
          c.on(h, squallrun + " -n " + std::to_string(per_host) + " --hosts " + host_list() + " --stats=json:" +
                      json + " " + program)));
    }
  }
  bool all_up(int limit_s) const {
    for (const auto& p : parts) {
      if (!p->wait_for_output(" up\n", per_host, limit_s)) return false;
    }
    return true;
  }
  ~job() { std::remove(json.c_str()); }
  // Every host's outcome, each given `limit_s` seconds from now to end (hung if not).
  std::vector<outcome> finish(int limit_s) {
    std::vector<int> limits;
    for (auto& p : parts) limits.push_back(p->seconds_so_far() + limit_s);
    std::vector<outcome> out;
    for (std::size_t h = 0; h < parts.size(); ++h) out.push_back(parts[h]->finish(limits[h], since));
    return out;
  }
};

// Each node reached the nodes of the other hosts over TCP and those of its own host through
// shared memory (from the statistics node 0 wrote).
void expect_mixed_transports(const std::string& json) {
  const squall::test::stats_json stats(json);
  ASSERT_EQ(stats.nodes, job_nodes) << stats.text;
  EXPECT_EQ(stats.counters.at("tcp.connections"),
            std::vector<std::uint64_t>(static_cast<std::size_t>(job_nodes), job_nodes - nodes_per_host))
      << stats.text;
  for (auto v : stats.counters.at("shm.packets_sent")) EXPECT_GT(v, 0u) << stats.text;
  EXPECT_EQ(stats.networks, std::vector<std::string>(static_cast<std::size_t>(job_nodes), "tcp")) << stats.text;
  // The engine's mailbox lane (small request/reply packets) to the other node of its host,
  // offered through the routed transport.
  for (auto v : stats.counters.at("shm.mailbox_packets")) EXPECT_GT(v, 0u) << stats.text;
}

// Between hosts over UCX instead (SQUALL_NETWORK=ucx), through UCX's TCP on the hosts' eth0:
// the namespaces share one kernel, so UCX would otherwise also offer their loopbacks.
const std::string over_ucx = "SQUALL_NETWORK=ucx UCX_TLS=tcp UCX_NET_DEVICES=eth0";

void expect_ucx_between_hosts(const std::string& json) {
  const squall::test::stats_json stats(json);
  ASSERT_EQ(stats.nodes, job_nodes) << stats.text;
  EXPECT_EQ(stats.counters.at("ucx.peers"),
            std::vector<std::uint64_t>(static_cast<std::size_t>(job_nodes), job_nodes - nodes_per_host))
      << stats.text;
  for (auto v : stats.counters.at("tcp.frames_sent")) EXPECT_EQ(v, 0u) << stats.text;  // no TCP transport
  for (auto v : stats.counters.at("ucx.messages_received")) EXPECT_GT(v, 0u) << stats.text;
  for (auto v : stats.counters.at("shm.packets_sent")) EXPECT_GT(v, 0u) << stats.text;
  // The UCX transports chosen, as --stats shows them: UCX's TCP on eth0 (UCX_NET_DEVICES).
  EXPECT_EQ(stats.networks, std::vector<std::string>(static_cast<std::size_t>(job_nodes), "ucx: tcp/eth0")) << stats.text;
}

class Hosts : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!c_.why_not().empty()) GTEST_SKIP() << c_.why_not();
  }
  // Cuts host 2's link for `down_s` seconds of a job of barriers for `barriers_s` seconds
  // under SQUALL_LIVENESS_S=`limit_s`: the job must carry on and end well on every host.
  void expect_outage_survived(int limit_s, int down_s, int barriers_s) {
    const std::string liveness = "SQUALL_LIVENESS_S=" + std::to_string(limit_s);
    job j(c_, scenarios + " barriers " + std::to_string(barriers_s), {liveness, liveness, liveness});
    ASSERT_TRUE(j.all_up(hang_s)) << j.parts[0]->output();
    c_.cut_link(2);
    std::this_thread::sleep_for(std::chrono::seconds(down_s));
    c_.restore_link(2);
    const auto out = j.finish(hang_s);
    for (int h = 0; h < hosts; ++h) {
      EXPECT_FALSE(out[h].hung) << report(out[h]);
      EXPECT_EQ(out[h].status, 0) << out[h].output;
      EXPECT_EQ(count_of(out[h].output, "barriers done"), nodes_per_host) << out[h].output;
    }
  }
  // Stops the last host's processes, waits for the other hosts' squallruns to end, then
  // kills the stopped ones (they would wait for ever): every host's outcome, timed from now.
  std::vector<outcome> stop_last_host(job& j) {
    j.since = clock_type::now();
    c_.stop_host(hosts - 1);
    std::vector<outcome> out;
    for (int h = 0; h < hosts; ++h) {
      if (h == hosts - 1) c_.kill_host(h);
      out.push_back(j.parts[h]->finish(j.parts[h]->seconds_so_far() + hang_s, j.since));
    }
    return out;
  }
  // Host 2 stopped: host 0 (SQUALL_LIVENESS_S=2) names it silent and ends first; host 1 (its
  // limit far past the deadline for a hang, so that it cannot find host 2 silent itself) names
  // it too, from what host 0's nodes said as they ended. `env`: the network's.
  void expect_survivors_name_the_stopped_host(const std::string& env);
  cluster c_;
};

TEST_F(Hosts, MessagesAndCollectivesRunOverSharedMemoryAndTcp) {
  // With the settings for dedicated processors (lock bias, pokes, no fence on a send), which
  // the other tests leave when the machine has fewer processors than the hosts have nodes:
  // so a job that mixes shared memory and TCP runs with them on any machine.
  const std::string dedicated = "SQUALL_OVERSUBSCRIBED=0";
  for (const std::string test : {"kf_am_test", "kf_collectives_test"}) {
    job j(c_, build_bin + "/" + test, {dedicated, dedicated, dedicated});
    const auto out = j.finish(240);
    for (int h = 0; h < hosts; ++h) {
      EXPECT_EQ(out[h].status, 0) << test << " host " << h << ":\n" << out[h].output;
    }
    expect_mixed_transports(j.json);
    EXPECT_NE(out[0].output.find("[  PASSED  ]"), std::string::npos) << out[0].output;
    EXPECT_EQ(out[0].output.find("FAILED"), std::string::npos) << out[0].output;
  }
}

TEST_F(Hosts, MessagesAndCollectivesRunUnderMpirun) {
  const std::string mpirun = MPIEXEC_PATH;
  if (mpirun.empty()) GTEST_SKIP() << "Open MPI's mpirun was not found at configure time";
  // mpirun starts on the first host; its launch agent runs the daemons of the others in
  // their namespaces, each under its own host name (mpirun tells hosts apart by name).
  char dir[] = "/tmp/squall-hosts-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string agent = std::string(dir) + "/agent", hostfile = std::string(dir) + "/hostfile",
                    json = std::string(dir) + "/stats.json";
  std::ofstream(agent) << "#!/bin/sh\nhost=$1; shift\nexec ip netns exec " << c_.ns("") << "$host unshare --uts "
                       << "sh -c 'hostname \"$0\"; exec sh -c \"$*\"' \"$host\" \"$@\"\n";
  std::ofstream(hostfile) << "h1 slots=2\nh2 slots=2\nh3 slots=2\n";
  ASSERT_TRUE(sh("chmod +x " + agent));
  for (const std::string test : {"kf_am_test", "kf_collectives_test"}) {
    const auto o = run("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
                           c_.on(0, "unshare --uts sh -c 'hostname h1; exec " + mpirun + " --hostfile " + hostfile +
                                        " -np 6 --mca plm_rsh_agent " + agent +
                                        " --mca oob_tcp_if_include 10.77.0.0/24 --mca btl_tcp_if_include 10.77.0.0/24"
                                        " -x SQUALL_TEST_NODES=6 -x SQUALL_STATS=json:" + json + " -x LSAN_OPTIONS " +
                                        (processors_shared(6) ? "-x SQUALL_OVERSUBSCRIBED=1 " : "") +
                                        build_bin + "/" + test + "'"),
                       240);
    EXPECT_EQ(o.status, 0) << test << ":\n" << o.output;
    expect_mixed_transports(json);
    EXPECT_NE(o.output.find("PASSED"), std::string::npos) << o.output;
  }
  sh(std::string("rm -rf ") + dir);
}

TEST_F(Hosts, HostWithTheWrongSecretIsRefused) {
  const std::string wrong = "SQUALL_JOB_SECRET=" + std::string(64, 'a');
  job j(c_, scenarios + " exchange", {"SQUALL_TCP_TIMEOUT=4", "SQUALL_TCP_TIMEOUT=4", wrong + " SQUALL_TCP_TIMEOUT=4"});
  const auto out = j.finish(hang_s);
  for (int h = 0; h < hosts; ++h) {
    EXPECT_FALSE(out[h].hung) << report(out[h]);
    EXPECT_NE(out[h].status, 0) << out[h].output;
    EXPECT_EQ(count_of(out[h].output, "exchange done"), 0) << out[h].output;
  }
  // The first two hosts refuse the third's nodes and give up on them by name...
  EXPECT_NE(out[0].output.find("refused a TCP connection from 10.77.0.3"), std::string::npos) << out[0].output;
  EXPECT_NE(out[0].output.find("it does not know the job's secret"), std::string::npos) << out[0].output;
  EXPECT_NE(out[1].output.find("node(s) 4, 5 never connected"), std::string::npos) << out[1].output;
  // ...and the third's nodes say where they could not get in.
  EXPECT_NE(out[2].output.find("could not connect to node 0 at 10.77.0.1"), std::string::npos) << out[2].output;
}

TEST_F(Hosts, GarbageOnAPortIsRefusedAndTheJobGoesOn) {
  job j(c_, scenarios + " barriers 3");
  ASSERT_TRUE(j.all_up(hang_s)) << j.parts[0]->output();
  // From the third host, garbage to node 0's port (41000 + 0) while the job runs.
  sh(c_.on(2, "bash -c 'printf \"GET / HTTP/1.0\\r\\n\\r\\n\" > /dev/tcp/" + address(0) + "/41000'"));
  const auto out = j.finish(hang_s);
  for (int h = 0; h < hosts; ++h) {
    EXPECT_FALSE(out[h].hung) << report(out[h]);
    EXPECT_EQ(out[h].status, 0) << out[h].output;
    EXPECT_EQ(count_of(out[h].output, "barriers done"), nodes_per_host) << out[h].output;
  }
  EXPECT_NE(out[0].output.find("refused a TCP connection from 10.77.0.3"), std::string::npos) << out[0].output;
  const squall::test::stats_json stats(j.json);  // only node 0 refused (the port is its)
  EXPECT_EQ(stats.counters.at("tcp.connections_refused"), (std::vector<std::uint64_t>{1, 0, 0, 0, 0, 0})) << stats.text;
}

// After host 2 is lost, every node of the other hosts names a lost node and exits, and every
// squallrun (host 2's too, if it still runs) exits non-zero, none hung. At least one
// host names a node of host 2; with `every_host_names_it` (TCP), every one does: a node that
// ends tells its peers whom it lost (an ending frame). Over UCX a host that notices first and
// exits is itself lost to the last one, which may name it instead.
void expect_host_lost(const std::vector<outcome>& out, int lost_host, const char* how, bool every_host_names_it = true,
                      int per_host = nodes_per_host) {
  bool named_lost_host = false;
  for (int h = 0; h < hosts; ++h) {
    SCOPED_TRACE(std::string(how) + ", host " + std::to_string(h));
    EXPECT_NE(out[h].status, 0) << out[h].output;
    std::printf("%s: host %d's squallrun exited with %d after %.2f s\n", how, h, out[h].status, out[h].seconds);
    if (h == lost_host) continue;
    EXPECT_FALSE(out[h].hung) << report(out[h]);
    int reports = 0;
    bool names_it = false;
    for (const auto& m : squall::test::search_all(out[h].output, "node ([0-9]+) (was lost|has not answered)")) {
      ++reports;
      const bool names_lost_host = std::stoi(m.groups[1]) / per_host == lost_host;
      names_it = names_it || names_lost_host;
      named_lost_host = named_lost_host || names_lost_host;
    }
    if (every_host_names_it) {
      EXPECT_TRUE(names_it) << out[h].output;
    }
    EXPECT_EQ(reports, per_host) << out[h].output;
    EXPECT_EQ(count_of(out[h].output, "barriers done"), 0) << out[h].output;
  }
  EXPECT_TRUE(named_lost_host) << how << ": no host named a node of host " << lost_host;
}

void Hosts::expect_survivors_name_the_stopped_host(const std::string& env) {
  const std::string quick = env + "SQUALL_LIVENESS_S=2", slow = env + slow_endings_off;
  job j(c_, scenarios + " barriers 600", {quick, slow, slow});
  ASSERT_TRUE(j.all_up(hang_s)) << j.parts[0]->output();
  const auto out = stop_last_host(j);
  EXPECT_GT(count_of(out[0].output, "has not answered for"), 0) << out[0].output;
  // Host 0's nodes are 0 and 1: whichever ended first told host 1.
  EXPECT_TRUE(squall::test::search(out[1].output, "said by node [01] as it ended")) << out[1].output;
  expect_host_lost(out, 2, env.empty() ? "stopped, noticed by host 0" : "stopped, noticed by host 0, over UCX");
}

// Reported once silent for SQUALL_LIVENESS_S (the connections' keepalive and user timeout
// end 2 s later).
TEST_F(Hosts, HostWhoseLinkIsCutIsReportedLost) {
  const std::string liveness = "SQUALL_LIVENESS_S=3";
  job j(c_, scenarios + " barriers 600", {liveness, liveness, liveness});
  ASSERT_TRUE(j.all_up(hang_s)) << j.parts[0]->output();
  j.since = clock_type::now();
  c_.cut_link(2);
  const auto out = j.finish(hang_s);
  EXPECT_FALSE(out[2].hung) << report(out[2]);  // host 2 loses all the others in turn
  expect_host_lost(out, 2, "link cut");
}

// A link down for 6 s, well inside SQUALL_LIVENESS_S: TCP retransmits once it is back, and
// the job carries on. (The connections used to end 5 s into any outage, whatever the limit.)
TEST_F(Hosts, LinkDownForLessThanTheLivenessLimitIsSurvived) { expect_outage_survived(20, 6, 12); }

// A link down for 7 s against a limit of 12: TCP's retransmission timeout, doubling while the
// link is down, would next try at about 12.6 s into the outage (the job ended at the limit:
// outages of 0.6-0.7 of it did); capped at 1 s (TCP_RTO_MAX_MS), the link is heard again
// within about a second of its return. (An outage of 8 s left 1.75 s to spare under load.)
TEST_F(Hosts, LinkDownForMostOfTheLivenessLimitIsSurvived) { expect_outage_survived(12, 7, 16); }

// A lossy network while the nodes connect: 30% of the packets each host receives dropped for
// the first 15 s. TCP retransmits, so the set-up must wait for late handshakes (the acceptor
// dropped a handshake not answered within 2 s, and the connector ended the job at the first
// refusal), a connector must notice an acceptor that never had its connection (the last
// packet of TCP's own handshake lost), and a node still making its connections must not
// count as silent. With half the round trips failing, TCP's doubling retransmission timeout
// (from 3 s once a SYN was sent again) may leave a link idle for a minute after the loss
// ends, which the default liveness limit would call a loss: the limits are raised.
TEST_F(Hosts, SetUpOverALossyNetworkSucceeds) {
  for (int h = 0; h < hosts; ++h) {
    if (!c_.lose(h, 30)) GTEST_SKIP() << "could not drop packets with nftables (nft, numgen)";
  }
  const std::string patient = "SQUALL_TCP_TIMEOUT=120 SQUALL_LIVENESS_S=120";
  job j(c_, scenarios + " barriers 3", {patient, patient, patient});
  std::this_thread::sleep_for(std::chrono::seconds(15));
  for (int h = 0; h < hosts; ++h) c_.stop_losing(h);
  const auto out = j.finish(240);
  for (int h = 0; h < hosts; ++h) {
    std::printf("30%% loss for 15 s: host %d's squallrun exited with %d after %.2f s\n", h, out[h].status,
                out[h].seconds);
    EXPECT_EQ(out[h].status, 0) << out[h].output;
    EXPECT_EQ(count_of(out[h].output, "barriers done"), nodes_per_host) << out[h].output;
  }
}

// Seen as the killed host's connections close: the silence limit is far past the deadline for
// a hang, so that it cannot be what noticed.
TEST_F(Hosts, HostWhoseProcessesAreKilledIsReportedLost) {
  job j(c_, scenarios + " barriers 600", {slow_endings_off, slow_endings_off, slow_endings_off});
  ASSERT_TRUE(j.all_up(hang_s)) << j.parts[0]->output();
  j.since = clock_type::now();
  c_.kill_host(2);
  const auto out = j.finish(hang_s);
  expect_host_lost(out, 2, "killed");
  for (int h = 0; h < 2; ++h) EXPECT_EQ(slow_endings_in(out[h].output), 0) << out[h].output;
}

// A host's only node killed: no host-mate is left to say how it ended, so its links' verdict
// is the one reported, at once (transport/held_verdict.hpp).
TEST_F(Hosts, HostsOnlyNodeKilledIsReportedLost) {
  job j(c_, scenarios + " barriers 600", {slow_endings_off, slow_endings_off, slow_endings_off}, /*nodes_a_host=*/1);
  ASSERT_TRUE(j.all_up(hang_s)) << j.parts[0]->output();
  j.since = clock_type::now();
  c_.kill_host(2);
  const auto out = j.finish(hang_s);
  expect_host_lost(out, 2, "only node killed", true, 1);
  for (int h = 0; h < 2; ++h) EXPECT_EQ(slow_endings_in(out[h].output), 0) << out[h].output;
}

TEST_F(Hosts, HostWhoseProcessesAreStoppedIsReportedSilent) {
  const std::string liveness = "SQUALL_LIVENESS_S=2";
  job j(c_, scenarios + " barriers 600", {liveness, liveness, liveness});
  ASSERT_TRUE(j.all_up(hang_s)) << j.parts[0]->output();
  const auto out = stop_last_host(j);
  // The first host to notice names a node of host 2 as silent; the other may see it go.
  EXPECT_GT(count_of(out[0].output + out[1].output, "has not answered for"), 0) << out[0].output << out[1].output;
  expect_host_lost(out, 2, "stopped");
}

// Host 0 notices the stopped host 2 first (its limit is 2 s, host 1's 20 s) and ends. Host 1
// then sees host 0's connections close: it names host 2's node from host 0's ending frame,
// where it used to name host 0's nodes, healthy ones that had merely ended first.
TEST_F(Hosts, SurvivorsNameTheLostHostNotTheOneThatEndedFirst) { expect_survivors_name_the_stopped_host(""); }

// Hosts 0 and 2 are cut apart, each still reaching host 1. Host 2's nodes, with the shorter
// liveness limit, stop hearing host 0's and end saying that one of them has been silent for
// 7 s. Host 1 has heard it since: it names the teller, a node of host 2, and so does host 0
// when host 1 tells it (they used to repeat host 2's verdict, and node 0, told that it was
// itself lost, named the node of host 1 that told it). Hosts 0 and 1 have a limit far past
// the deadline for a hang: they cannot find host 2 silent themselves.
TEST_F(Hosts, SilenceSaidByACutOffHostIsNotBelievedWhereTheNodeIsHeard) {
  const std::string slow = slow_endings_off, quick = "SQUALL_LIVENESS_S=7";
  job j(c_, scenarios + " barriers 600", {slow, slow, quick});
  ASSERT_TRUE(j.all_up(hang_s)) << j.parts[0]->output();
  j.since = clock_type::now();
  c_.separate(0, 2);
  const auto out = j.finish(hang_s);
  EXPECT_GT(count_of(out[2].output, "has not answered for"), 0) << out[2].output;
  expect_host_lost(out, 2, "cut off from host 0");
}

// Each host ended naming the node killed before init: its own host's squallrun as it saw it
// end, the others' nodes as lost. Not at SQUALL_TCP_TIMEOUT: the jobs below run with it (and
// the silence limit) far past the deadline for a hang, so that it cannot be what ended them.
void expect_reported_everywhere(const std::vector<outcome>& out, int victim) {
  for (int h = 0; h < hosts; ++h) {
    SCOPED_TRACE("node " + std::to_string(victim) + " killed, host " + std::to_string(h));
    std::printf("node %d killed before init: host %d's squallrun exited with %d after %.2f s\n", victim, h,
                out[h].status, out[h].seconds);
    EXPECT_FALSE(out[h].hung) << report(out[h]);
    EXPECT_NE(out[h].status, 0) << out[h].output;
    EXPECT_EQ(slow_endings_in(out[h].output), 0) << out[h].output;
    EXPECT_TRUE(squall::test::search(out[h].output, "node " + std::to_string(victim) +
                                                        "( was lost| \\(pid [0-9]+\\) was killed by signal 9)"))
        << out[h].output;
  }
}

// A node killed before squall::init: only its host's squallrun sees it, while the other
// hosts' nodes are still making their connections (waiting for its). Every host must end
// naming it. Node 5's host mate reaches all the others itself; node 2's, node 3, waits for
// nodes 4 and 5: it tells the nodes it reached (0 and 1), and they tell 4 and 5. Node 0 is the
// first every other node connects to: they go on to its host mate, node 1, while it does not
// listen (they waited for it until the timeout).
TEST_F(Hosts, NodeKilledBeforeInitIsReportedEverywhere) {
  for (const int victim : {5, 2, 0}) {
    job j(c_, kf_scenarios + " kill-before-init " + std::to_string(victim),
          {slow_endings_off, slow_endings_off, slow_endings_off});
    expect_reported_everywhere(j.finish(hang_s), victim);
  }
}

// A host's only node killed before init: no node of its host is left to tell the others, so
// its squallrun starts a stand-in that does (launcher/stand_in.hpp). Node 2 is the last node,
// which nobody connects to; node 0 the first, which every other connects to. Before the
// stand-in, the other hosts waited for it until SQUALL_TCP_TIMEOUT (30 s).
TEST_F(Hosts, HostsOnlyNodeKilledBeforeInitIsReportedEverywhere) {
  for (const int victim : {2, 0}) {
    job j(c_, kf_scenarios + " kill-before-init " + std::to_string(victim),
          {slow_endings_off, slow_endings_off, slow_endings_off}, /*nodes_a_host=*/1);
    expect_reported_everywhere(j.finish(hang_s), victim);
  }
}

// The same with node 0, host 2 having no route to host 0: its nodes reach only host 1's, which
// wait for node 0 and do not answer. Told by node 1, those answer them to tell them in turn.
// (When node 1 ended before node 4 reached it, node 4 waited on node 2 until the timeout.)
TEST_F(Hosts, NodeKilledBeforeInitIsReportedByNodesThatWaitedForIt) {
  c_.unroute(2, 0);
  job j(c_, kf_scenarios + " kill-before-init 0", {slow_endings_off, slow_endings_off, slow_endings_off});
  const auto out = j.finish(hang_s);
  expect_reported_everywhere(out, 0);
  EXPECT_TRUE(squall::test::search(out[2].output, "said by node [23] as it ended")) << out[2].output;
}

// Node 1 computes for 5 s while the others wait for it: no link carries a packet meanwhile,
// and only the heartbeat frames show that the other hosts are alive. Also with the limit set
// on one host only, 1 s against the others' 30: the others beat for the shortest limit of the
// job (they beat once a second, for their own, and host 0 found them silent), and node 0
// says that the limits differ.
TEST_F(Hosts, IdleLinksAreNotSilence) {
  const std::string two = "SQUALL_LIVENESS_S=2", one = "SQUALL_LIVENESS_S=1";
  for (const std::vector<std::string>& env : {std::vector<std::string>{two, two, two}, std::vector<std::string>{one}}) {
    SCOPED_TRACE(env.size() == 1 ? "1 s on host 0 only" : "2 s on every host");
    job j(c_, kf_scenarios + " compute 1 5", env);
    const auto out = j.finish(hang_s);
    for (int h = 0; h < hosts; ++h) {
      EXPECT_FALSE(out[h].hung) << report(out[h]);
      EXPECT_EQ(out[h].status, 0) << out[h].output;
      EXPECT_EQ(count_of(out[h].output, "has not answered"), 0) << out[h].output;
    }
    EXPECT_EQ(count_of(out[0].output, "computed"), 1) << out[0].output;
    EXPECT_EQ(count_of(out[0].output, "SQUALL_LIVENESS_S differs"), env.size() == 1 ? 1 : 0) << out[0].output;
  }
}

// The same job, lost hosts and refusals with UCX between the hosts.
class HostsOverUcx : public Hosts {
 protected:
  void SetUp() override {
    if (!SQUALL_HAVE_UCX) GTEST_SKIP() << "Squall was built without UCX";
    Hosts::SetUp();
  }
  const std::vector<std::string> env{over_ucx, over_ucx, over_ucx};
};

TEST_F(HostsOverUcx, MessagesAndCollectivesRun) {
  for (const std::string test : {"kf_am_test", "kf_collectives_test"}) {
    job j(c_, build_bin + "/" + test, env);
    const auto out = j.finish(240);
    for (int h = 0; h < hosts; ++h) {
      EXPECT_EQ(out[h].status, 0) << test << " host " << h << ":\n" << out[h].output;
    }
    expect_ucx_between_hosts(j.json);
    EXPECT_NE(out[0].output.find("[  PASSED  ]"), std::string::npos) << out[0].output;
  }
}

// A TSM program (its litmus tests and a stress test on 4 KiB blocks) across the three hosts,
// the protocol's messages between hosts over UCX.
TEST_F(HostsOverUcx, TsmProgramRuns) {
  job j(c_, build_bin + "/tsm_test --gtest_filter=*Litmus*4KiB*:*Stress*4KiB*", env);
  const auto out = j.finish(240);
  for (int h = 0; h < hosts; ++h) EXPECT_EQ(out[h].status, 0) << "host " << h << ":\n" << out[h].output;
  expect_ucx_between_hosts(j.json);
  EXPECT_NE(out[0].output.find("[  PASSED  ]"), std::string::npos) << out[0].output;
}

// UCX's endpoints come from addresses exchanged over the job's authenticated connections:
// a host without the secret never gets one.
TEST_F(HostsOverUcx, HostWithTheWrongSecretIsRefused) {
  const std::string wrong = "SQUALL_JOB_SECRET=" + std::string(64, 'a');
  job j(c_, scenarios + " exchange",
        {over_ucx + " SQUALL_TCP_TIMEOUT=4", over_ucx + " SQUALL_TCP_TIMEOUT=4", wrong + " " + over_ucx + " SQUALL_TCP_TIMEOUT=4"});
  const auto out = j.finish(hang_s);
  for (int h = 0; h < hosts; ++h) {
    EXPECT_FALSE(out[h].hung) << report(out[h]);
    EXPECT_NE(out[h].status, 0) << out[h].output;
    EXPECT_EQ(count_of(out[h].output, "exchange done"), 0) << out[h].output;
  }
  EXPECT_NE(out[0].output.find("it does not know the job's secret"), std::string::npos) << out[0].output;
}

// Garbage to every port host 0 listens on while the job runs (UCX's TCP transport listens on
// its own ports for UCX's connections, which UCX does not authenticate): the job goes on.
TEST_F(HostsOverUcx, GarbageOnUcxPortsIsRefusedAndTheJobGoesOn) {
  job j(c_, scenarios + " barriers 5", env);
  ASSERT_TRUE(j.all_up(hang_s)) << j.parts[0]->output();
  const std::string listening = run(c_.on(0, "ss -Hltn")).output;
  std::vector<std::string> ports;
  for (const auto& m : squall::test::search_all(listening, address(0) + ":([0-9]+)")) ports.push_back(m.groups[1]);
  for (const auto& m : squall::test::search_all(listening, "\\*:([0-9]+)")) ports.push_back(m.groups[1]);
  ASSERT_GE(ports.size(), static_cast<std::size_t>(nodes_per_host)) << listening;  // a UCX listener each
  for (const auto& port : ports) {
    sh(c_.on(2, "bash -c 'printf \"GET / HTTP/1.0\\r\\n\\r\\n\" > /dev/tcp/" + address(0) + "/" + port + "'"));
    sh(c_.on(2, "bash -c 'head -c 4096 /dev/urandom > /dev/tcp/" + address(0) + "/" + port + "'"));
  }
  const auto out = j.finish(hang_s);
  for (int h = 0; h < hosts; ++h) {
    EXPECT_FALSE(out[h].hung) << report(out[h]);
    EXPECT_EQ(out[h].status, 0) << "ports " << ports.size() << ": " << listening << out[h].output;
    EXPECT_EQ(count_of(out[h].output, "barriers done"), nodes_per_host) << out[h].output;
  }
}

// As Hosts.HostWhoseProcessesAreKilledIsReportedLost: seen as the endpoints fail, not as a
// silence.
TEST_F(HostsOverUcx, HostWhoseProcessesAreKilledIsReportedLost) {
  const std::string fast = over_ucx + " " + slow_endings_off;
  job j(c_, scenarios + " barriers 600", {fast, fast, fast});
  ASSERT_TRUE(j.all_up(hang_s)) << j.parts[0]->output();
  j.since = clock_type::now();
  c_.kill_host(2);
  const auto out = j.finish(hang_s);
  expect_host_lost(out, 2, "killed, over UCX", false);
  for (int h = 0; h < 2; ++h) EXPECT_EQ(slow_endings_in(out[h].output), 0) << out[h].output;
}

// UCX 1.13 has no setting for TCP's user timeout, so data stuck on a cut link is not noticed
// by its endpoint within seconds: the watch of the peers' traffic (SQUALL_LIVENESS_S) reports
// the host instead.
TEST_F(HostsOverUcx, HostWhoseLinkIsCutIsReportedLost) {
  const std::string liveness = over_ucx + " SQUALL_LIVENESS_S=3";
  job j(c_, scenarios + " barriers 600", {liveness, liveness, liveness});
  ASSERT_TRUE(j.all_up(hang_s)) << j.parts[0]->output();
  j.since = clock_type::now();
  c_.cut_link(2);
  expect_host_lost(j.finish(hang_s), 2, "link cut, over UCX", false);
}

// As Hosts.SurvivorsNameTheLostHostNotTheOneThatEndedFirst, over UCX: host 1 names host 2's
// node from host 0's ending message. (Without ending messages over UCX, host 1 saw host 0's
// endpoints fail and blamed host 0.)
TEST_F(HostsOverUcx, SurvivorsNameTheLostHostNotTheOneThatEndedFirst) {
  expect_survivors_name_the_stopped_host(over_ucx + " ");
}

// As Hosts.HostsOnlyNodeKilledBeforeInitIsReportedEverywhere: UCX's set-up goes through the
// same TCP connections first, and a node that has made all of them by the time the stand-in
// ends exchanges UCX addresses over them, where the stand-in's ending frame stands in the
// lost node's address. (Before the exchange read it, such a node ended with "exchanging UCX
// addresses with node 2: receiving connection closed", naming nothing the job lost.)
TEST_F(HostsOverUcx, HostsOnlyNodeKilledBeforeInitIsReportedEverywhere) {
  const std::string fast = over_ucx + " " + slow_endings_off;
  job j(c_, kf_scenarios + " kill-before-init 2", {fast, fast, fast}, /*nodes_a_host=*/1);
  expect_reported_everywhere(j.finish(hang_s), 2);
}

TEST_F(HostsOverUcx, IdleLinksAreNotSilence) {
  const std::string liveness = over_ucx + " SQUALL_LIVENESS_S=2";
  job j(c_, kf_scenarios + " compute 1 5", {liveness, liveness, liveness});
  const auto out = j.finish(hang_s);
  for (int h = 0; h < hosts; ++h) {
    EXPECT_FALSE(out[h].hung) << report(out[h]);
    EXPECT_EQ(out[h].status, 0) << out[h].output;
    EXPECT_EQ(count_of(out[h].output, "has not answered"), 0) << out[h].output;
  }
}

}  // namespace
