// SPDX-License-Identifier: BSD-3-Clause
// squallrun as a user meets it: lost nodes are reported by every survivor as soon as their
// process ends (not once silent for SQUALL_LIVENESS_S) and the launcher exits non-zero, and
// the same under mpirun (where the nodes watch each other and their launcher themselves); a
// stopped node is reported once it has been silent for SQUALL_LIVENESS_S, a computing one is
// not; bad flags, bad environment values and wire-level misuse end with a message naming the
// cause.
#include <gtest/gtest.h>

#include "patterns.hpp"
#include "run_command.hpp"
#include "stats_json.hpp"

#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using squall::test::background;
using squall::test::count_of;
using squall::test::hang_s;
using squall::test::report;
using squall::test::run;
using squall::test::slow_endings_in;
using squall::test::slow_endings_off;

const std::string squallrun = SQUALLRUN_PATH;
const std::string scenarios = SCENARIOS_PATH;
const std::string mpirun_path = MPIEXEC_PATH;

// Open MPI's mpirun, told not to end the job itself when a node fails: the nodes must.
std::string mpirun(int nodes) {
  return mpirun_path + " -np " + std::to_string(nodes) +
         " --oversubscribe --bind-to none --allow-run-as-root --mca orte_abort_on_non_zero_status 0 ";
}

// The pids that the show-pids scenario printed ("node K pid P up"), by node.
std::vector<int> node_pids(const std::string& output, int nodes) {
  std::vector<int> pids(static_cast<std::size_t>(nodes), 0);
  for (const auto& m : squall::test::search_all(output, "node ([0-9]+) pid ([0-9]+) up")) {
    const int node = std::stoi(m.groups[1]);
    if (node >= 0 && node < nodes) pids[static_cast<std::size_t>(node)] = std::stoi(m.groups[2]);
  }
  return pids;
}

// A process that exited but was not reaped yet (a zombie) counts as gone.
bool running(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  const auto paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] != 'Z' && text[paren + 2] != 'X';
}

// Whether every process in `pids` is gone within `limit_s` seconds.
bool all_end(std::vector<int> pids, int limit_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(limit_s);
  for (;;) {
    std::erase_if(pids, [](int pid) { return !running(pid); });
    if (pids.empty()) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// Starts a show-pids job and returns its nodes' pids once all are up (none if they were not
// within hang_s).
std::vector<int> start_nodes(const background& job, int nodes) {
  if (!job.wait_for_output(" up\n", nodes, hang_s)) return {};
  auto pids = node_pids(job.output(), nodes);
  if (std::count(pids.begin(), pids.end(), 0) != 0) return {};
  return pids;
}

// Kills the launcher of a show-pids job once its nodes are up; every node must end (they
// would wait in their barriers for ever).
void expect_nodes_end_with_their_launcher(const std::string& command, int nodes) {
  background job(command);
  const auto pids = start_nodes(job, nodes);
  ASSERT_FALSE(pids.empty()) << job.output();
  ASSERT_EQ(kill(job.pid(), SIGKILL), 0);
  EXPECT_TRUE(all_end(pids, hang_s)) << "hung: node(s) still ran " << hang_s << " s after their launcher was killed\n"
                                     << job.output();
}

// The survivors report what squallrun saw (the silence limit is far past the deadline for a
// hang, so that it cannot be what noticed).
TEST(LostNode, KilledNodeIsReportedByEveryOtherNode) {
  const auto o = run(slow_endings_off + squallrun + " -n 4 " + scenarios + " kill-node 2");
  EXPECT_FALSE(o.hung) << report(o);
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("squallrun: node 2 (pid"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("killed by signal 9"), std::string::npos) << o.output;
  EXPECT_EQ(count_of(o.output, "node 2 was lost"), 3) << o.output;
  EXPECT_EQ(count_of(o.output, "node 2 was lost (was killed by signal 9"), 3) << o.output;
  EXPECT_EQ(slow_endings_in(o.output), 0) << o.output;
}

// The survivors wait in a channel round for the lost node's end of round.
TEST(LostNode, KilledNodeInAChannelRoundIsReported) {
  const auto o = run(slow_endings_off + squallrun + " -n 4 " + scenarios + " channel-lost 2");
  EXPECT_FALSE(o.hung) << report(o);
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_EQ(count_of(o.output, "node 2 was lost"), 3) << o.output;
  EXPECT_EQ(count_of(o.output, "node 2 was lost (was killed by signal 9"), 3) << o.output;
  EXPECT_EQ(slow_endings_in(o.output), 0) << o.output;
}

// mpirun itself then never ends (Open MPI 4.1 waits forever once a process died of a
// signal, with that option), so the test looks at the nodes, not at mpirun's exit.
TEST(LostNode, KilledNodeIsReportedByEveryOtherNodeUnderMpirun) {
  if (mpirun_path.empty()) GTEST_SKIP() << "Open MPI's mpirun was not found at configure time";
  for (int nodes : {4, 8}) {
    background job(slow_endings_off + mpirun(nodes) + scenarios + " show-pids");
    auto pids = start_nodes(job, nodes);
    ASSERT_FALSE(pids.empty()) << job.output();
    ASSERT_EQ(kill(pids[2], SIGKILL), 0);
    EXPECT_TRUE(job.wait_for_output("node 2 was lost (its process ended before squall::finalize); exiting",
                                    nodes - 1, hang_s))
        << "hung: not every survivor said so within " << hang_s << " s; " << nodes << " nodes:\n" << job.output();
    EXPECT_TRUE(all_end(pids, hang_s)) << "hung: " << nodes << " nodes: a survivor still ran after " << hang_s << " s\n"
                                       << job.output();
    EXPECT_EQ(slow_endings_in(job.output()), 0) << job.output();
  }
}

// A job area's name left in /dev/shm by a job killed during its start-up is removed by the
// next job under mpirun, once its creator is gone and it is a minute old; a name whose
// creator lives, or a young one, is left.
TEST(Mpirun, JobAreaAbandonedAtStartUpIsRemovedByTheNextJob) {
  if (mpirun_path.empty()) GTEST_SKIP() << "Open MPI's mpirun was not found at configure time";
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  ASSERT_GT(gone, 0);
  waitpid(gone, nullptr, 0);
  const std::string hex(32, 'a');
  const std::string abandoned = "/dev/shm/squall-" + std::to_string(gone) + "-" + hex;
  const std::string alive = "/dev/shm/squall-" + std::to_string(getpid()) + "-" + hex;
  const std::string young = "/dev/shm/squall-" + std::to_string(gone) + "-" + std::string(32, 'b');
  for (const auto& f : {abandoned, alive, young}) std::ofstream(f) << "x";
  ASSERT_EQ(run("touch -d '2 minutes ago' " + abandoned + " " + alive).status, 0);
  const auto o = run(mpirun(2) + scenarios + " stats");
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_FALSE(std::ifstream(abandoned).good()) << "the abandoned name is still there";
  EXPECT_TRUE(std::ifstream(alive).good()) << "a name whose creator lives was removed";
  EXPECT_TRUE(std::ifstream(young).good()) << "a young name was removed";
  for (const auto& f : {abandoned, alive, young}) std::remove(f.c_str());
}

// The job areas' names in /dev/shm whose creator (the pid in "squall-<pid>-<hex>") is gone.
std::vector<std::string> abandoned_names() {
  std::vector<std::string> out;
  for (const auto& m : squall::test::search_all(run("ls /dev/shm").output, "squall-([0-9]+)-[0-9a-f]{32}")) {
    if (kill(std::stoi(m.groups[1]), 0) != 0 && errno == ESRCH) out.push_back("/dev/shm/" + m.groups[0]);
  }
  return out;
}

// Under mpirun a rank that ends before squall::init leaves the others' start-up waiting for
// it, unless mpirun notices (only when the others had started, and then it stops them): the
// start-up ends after SQUALL_TCP_TIMEOUT instead of never. A job area's name that mpirun's
// stop left (the first node removes it on SIGTERM, but under a sanitizer the signal may come
// too late, before SIGKILL) is removed by the next job once it is old. (mpirun's exit status
// says nothing here: with the option this test's mpirun has, it ends 0 or 1 whatever its
// ranks' statuses.)
TEST(Mpirun, NodeExitingBeforeInitEndsTheJob) {
  if (mpirun_path.empty()) GTEST_SKIP() << "Open MPI's mpirun was not found at configure time";
  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto o = run("SQUALL_TCP_TIMEOUT=3 " + mpirun(3) + scenarios + " exit-before-init 1");
    EXPECT_FALSE(o.hung) << report(o);
  }
  for (const auto& name : abandoned_names()) run("touch -d '2 minutes ago' " + name);
  EXPECT_EQ(run(mpirun(2) + scenarios + " stats").status, 0);
  EXPECT_TRUE(abandoned_names().empty()) << "a job area's name was left in /dev/shm: " << abandoned_names().front();
}

TEST(LostLauncher, NodesEndWhenSquallrunIsKilled) {
  expect_nodes_end_with_their_launcher(squallrun + " -n 4 " + scenarios + " show-pids", 4);
}

TEST(LostLauncher, NodesEndWhenMpirunIsKilled) {
  if (mpirun_path.empty()) GTEST_SKIP() << "Open MPI's mpirun was not found at configure time";
  expect_nodes_end_with_their_launcher(mpirun(4) + scenarios + " show-pids", 4);
}

// 4 and 8 nodes on this machine's (few) cores: the watchdogs must still show life. The
// stopped node, killed by squallrun after the grace period, is said to be so, not to have
// been killed by a signal 9 from elsewhere.
TEST(Liveness, StoppedNodeIsReportedByEveryOtherNode) {
  for (int nodes : {4, 8}) {
    const auto o = run("SQUALL_LIVENESS_S=2 " + squallrun + " -n " + std::to_string(nodes) + " --grace 1 " +
                       scenarios + " stop-node 2");
    EXPECT_FALSE(o.hung) << report(o);
    EXPECT_NE(o.status, 0) << o.output;
    EXPECT_EQ(count_of(o.output, "node 2 has not answered for"), nodes - 1) << o.output;
    EXPECT_NE(o.output.find("(stopped? SQUALL_LIVENESS_S); exiting"), std::string::npos) << o.output;
    EXPECT_NE(o.output.find("squallrun: node 2 (pid"), std::string::npos) << o.output;
    EXPECT_NE(o.output.find("(stopped? SQUALL_LIVENESS_S); killed by squallrun after the 1 s grace period"),
              std::string::npos)
        << o.output;
    EXPECT_EQ(count_of(o.output, "signal 9"), 0) << o.output;
  }
}

TEST(Liveness, NodeComputingWithoutCallsIsNotReported) {
  for (const std::string setting : {"-n 8", "-n 4 SQUALL_PROGRESS_THREAD=0"}) {
    const std::string nodes = setting.substr(0, 4), env = setting.size() > 4 ? setting.substr(5) : "";
    const auto o = run("SQUALL_LIVENESS_S=2 " + env + " " + squallrun + " " + nodes + " " + scenarios + " compute 1 5");
    EXPECT_EQ(o.status, 0) << setting << "\n" << o.output;
    EXPECT_EQ(count_of(o.output, "has not answered"), 0) << setting << "\n" << o.output;
    EXPECT_EQ(count_of(o.output, "computed"), 1) << setting << "\n" << o.output;
  }
}

TEST(LostNode, NodeExitingWithoutFinalizeIsLost) {
  const auto o = run(slow_endings_off + squallrun + " -n 8 " + scenarios + " exit-early 5");
  EXPECT_FALSE(o.hung) << report(o);
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("exited without calling squall::finalize"), std::string::npos) << o.output;
  EXPECT_EQ(count_of(o.output, "node 5 was lost"), 7) << o.output;
  EXPECT_EQ(count_of(o.output, "node 5 was lost (exited without calling squall::finalize)"), 7) << o.output;
  EXPECT_EQ(slow_endings_in(o.output), 0) << o.output;
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

TEST(WireErrors, CollectiveMismatchWithASplitPhaseSumIsReported) {
  const auto o = run(squallrun + " -n 3 " + scenarios + " mismatch-split");
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("collective mismatch"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("allreduce_sum"), std::string::npos) << o.output;
}

// Nodes that disagree about a collective's root would wait for each other for ever (reduce)
// or each keep its own value (broadcast): every collective message carries its root, and a
// node that meets another root, or a part of a collective it has finished, ends the job.
TEST(WireErrors, ReduceWithDifferentRootsEndsTheJob) {
  const auto o = run("SQUALL_LIVENESS_S=0 " + squallrun + " -n 2 " + scenarios + " different-roots");
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("the nodes disagree about the root of reduce (collective #"), std::string::npos)
      << o.output;
}

TEST(WireErrors, BroadcastWithDifferentRootsEndsTheJob) {
  for (const char* n : {"2", "4"}) {
    const auto o = run("SQUALL_LIVENESS_S=0 " + squallrun + " -n " + n + " " + scenarios + " broadcast-roots");
    EXPECT_NE(o.status, 0) << o.output;
    EXPECT_NE(o.output.find("the nodes disagree about"), std::string::npos) << o.output;
  }
  // One node alone with another root: it waits for a part that never comes while another
  // node's part, from the other root, is there.
  const auto o = run("SQUALL_LIVENESS_S=0 " + squallrun + " -n 3 " + scenarios + " broadcast-root-1-on-last");
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("the nodes disagree about the root of broadcast"), std::string::npos) << o.output;
}

// A live node that skips a channel round for a collective leaves the others waiting for ever;
// one that has a part of that collective from it (node 2: the barrier's first round) says so,
// naming the round and the collective.
TEST(WireErrors, ChannelRoundSkippedForACollectiveIsSaid) {
  background job("SQUALL_LIVENESS_S=0 " + squallrun + " -n 3 " + scenarios + " channel-skip 1");
  EXPECT_TRUE(job.wait_for_output("but node 1 has gone on to barrier", 1, hang_s))
      << "hung: not said within " << hang_s << " s\n" << job.output();
  EXPECT_NE(job.output().find("node 2: warning: this node waits for node 1's credit of round 2 of channel set #"),
            std::string::npos)
      << job.output();
}

// A node alive but late to a collective (here it computes for 3 s first) is waited for; past
// SQUALL_WAIT_NOTICE_S the waiting node says, once, whose part it waits for, and counts it.
TEST(Waits, CollectiveWaitingLongSaysForWhom) {
  char dir[] = "/tmp/squall-notice-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string json = std::string(dir) + "/stats.json";
  for (const std::string notice : {"1", "0"}) {
    const auto o = run("SQUALL_WAIT_NOTICE_S=" + notice + " SQUALL_STATS=json:" + json + " " + squallrun + " -n 2 " +
                       scenarios + " compute 1 3");
    EXPECT_EQ(o.status, 0) << o.output;
    EXPECT_EQ(count_of(o.output, "computed"), 1) << o.output;
    const int said = notice == "1" ? 1 : 0;
    EXPECT_EQ(count_of(o.output, "node 0: warning: has waited 1 s for node 1's part of barrier (collective #"), said)
        << notice << "\n" << o.output;
    EXPECT_EQ(count_of(o.output, "has waited"), said) << notice << "\n" << o.output;  // once, and by node 0 only
    const squall::test::stats_json stats(json);
    ASSERT_EQ(stats.nodes, 2) << stats.text;
    EXPECT_EQ(stats.counters.at("wait.notices"), (std::vector<std::uint64_t>{std::uint64_t(said), 0}))
        << stats.text;
  }
  std::filesystem::remove_all(dir);
}

TEST(WireErrors, HandlerThatWaitsIsReported) {
  const auto o = run(squallrun + " -n 2 " + scenarios + " handler-waits");
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("a handler tried to wait"), std::string::npos) << o.output;
}

// One table across the nodes, printed once by node 0: totals, the program's handler apart.
TEST(Launcher, StatsReportAtFinalize) {
  const auto o = run("SQUALL_STATS=1 " + squallrun + " -n 3 " + scenarios + " stats");
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_EQ(count_of(o.output, "squall stats: 3 nodes on "), 1) << o.output;
  EXPECT_TRUE(squall::test::search(o.output, "\nam +[a-z_]+ +[0-9]+ ")) << o.output;  // the layer
  EXPECT_TRUE(squall::test::search(o.output, "\n(am)? +messages_received +[0-9]+ ")) << o.output;
  EXPECT_TRUE(squall::test::search(o.output, "\n +messages_sent +[0-9]+ ")) << o.output;
  // Every node sent one hello to every node.
  const auto hello = squall::test::search(o.output, "\n  [^\n]*on_hello +9 +3 +3 +1.00 ");
  ASSERT_TRUE(hello) << o.output;
  const std::size_t at = hello->position;
  EXPECT_LT(o.output.find("program's handlers"), at) << o.output;
  EXPECT_GT(o.output.find("runtime handlers"), at) << o.output;
  EXPECT_NE(o.output.find("not shown: "), std::string::npos) << o.output;  // zeros are hidden
}

// Only node 1 asks for statistics: the others learn it in finalize's barrier and join the
// gathering instead of leaving node 1 waiting; node 0 prints the table.
TEST(Launcher, StatsAskedByOneNodeOnlyDoesNotHang) {
  const auto o = run(squallrun + " -n 3 sh -c 'if [ \"$SQUALL_NODE\" = 1 ]; then export SQUALL_STATS=1; fi; exec " +
                     scenarios + " stats'", 60);
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_EQ(count_of(o.output, "squall stats: 3 nodes on "), 1) << o.output;
}

TEST(Launcher, StatsFormsAreCheckedOnce) {
  for (const std::string forms : {"--stats=maybe", "--stats=json:", "--stats=0,nodes"}) {
    const auto o = run(squallrun + " -n 2 " + forms + " " + scenarios + " stats");
    EXPECT_EQ(o.status, 2) << forms << "\n" << o.output;
    EXPECT_EQ(count_of(o.output, "SQUALL_STATS must be"), 1) << forms << "\n" << o.output;
  }
  // A form after json:FILE would be taken into the file's name.
  for (const std::string forms : {"--stats=json:/tmp/squall-forms.json,1", "--stats=1,json:/tmp/s.json,NODES,x"}) {
    const auto o = run(squallrun + " -n 2 " + forms + " " + scenarios + " stats");
    EXPECT_EQ(o.status, 2) << forms << "\n" << o.output;
    EXPECT_NE(o.output.find("json:FILE must be the last form, but '"), std::string::npos) << forms << "\n" << o.output;
  }
  const auto o = run("SQUALL_STATS=json:/nonexistent/dir/s.json " + squallrun + " -n 2 " + scenarios + " stats");
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("node 0 cannot write /nonexistent/dir"), std::string::npos) << o.output;
}

// "--stats=" set SQUALL_STATS empty, which the nodes take as no statistics: refused, once.
TEST(Launcher, EmptyStatsFormsAreRefused) {
  const auto o = run(squallrun + " -n 2 --stats= " + scenarios + " stats");
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_EQ(o.output, "squallrun: --stats= is empty: give the forms after '=' (1, nodes, json:FILE), or --stats "
                      "alone for 1\n");
}

// An option that sets one value, given twice, is refused whatever its forms: it silently took
// the last ("-n 2 -n 4" ran 4 nodes). A flag may repeat.
TEST(Launcher, OptionGivenTwiceIsRefused) {
  const std::string cases[][2] = {
      {"-n 2 -n 4", "-n/--nodes is given twice ('2', then '4')"},
      {"-n2 --nodes=2", "-n/--nodes is given twice ('2', then '2')"},
      {"--nodes 4 -n 4", "-n/--nodes is given twice ('4', then '4')"},
      {"-n 2 --grace 1 --grace=2", "--grace is given twice ('1', then '2')"},
      {"-n 2 --aggregation 8 --aggregation 8", "--aggregation is given twice ('8', then '8')"},
      {"-n 2 --transport shm --transport=tcp", "--transport is given twice ('shm', then 'tcp')"},
      {"-n 2 --stats --stats=nodes", "--stats is given twice (no value, then 'nodes')"},
      {"-n 2 --ring-bytes 65536 --ring-bytes 131072", "--ring-bytes is given twice ('65536', then '131072')"}};
  for (const auto& [args, said] : cases) {
    const auto o = run(squallrun + " " + args + " /bin/true");
    EXPECT_EQ(o.status, 2) << args << "\n" << o.output;
    EXPECT_EQ(o.output, "squallrun: " + std::string(said) + ": give it once\n") << args;
  }
  const auto o = run(squallrun + " -n 2 --label --label /bin/true");
  EXPECT_EQ(o.status, 0) << o.output;
}

// A JSON file that could not be written at the end would lose the counters with a warning:
// a directory, or a name under something that is not one, is refused at start-up.
TEST(Launcher, StatsJsonPathThatCannotBeAFileIsRefusedAtStartUp) {
  char dir[] = "/tmp/squall-stats-dir-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string file = std::string(dir) + "/plain";
  std::ofstream(file) << "x";
  const std::string cases[][2] = {{dir, std::string(dir) + " (Is a directory)"},
                                  {file + "/s.json", file + " (Not a directory)"}};
  for (const auto& [path, said] : cases) {
    const auto o = run(squallrun + " -n 2 --stats=json:" + path + " " + scenarios + " stats");
    EXPECT_NE(o.status, 0) << path << "\n" << o.output;
    EXPECT_NE(o.output.find("node 0 cannot write " + said), std::string::npos) << path << "\n" << o.output;
  }
  std::remove(file.c_str());
  rmdir(dir);
}

// A JSON report that cannot be written at the end (a full disk: /dev/full) ends the job with
// status 1 and the system's reason, not a warning with another errno and status 0.
TEST(Launcher, StatsJsonThatCannotBeWrittenAtTheEndFailsTheJob) {
  const auto o = run(squallrun + " -n 2 --stats=json:/dev/full " + scenarios + " stats");
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("SQUALL_STATS: could not write /dev/full: " + std::string(std::strerror(ENOSPC))),
            std::string::npos)
      << o.output;
}

// Output that cannot be written (a full disk: /dev/full) fails the job with the system's
// reason, whether a node writes to squallrun's stdout itself (its finalize says so) or through
// squallrun (--label). Before, it was lost without a word and the job ended with status 0.
TEST(Launcher, OutputThatCannotBeWrittenFailsTheJob) {
  const std::string said = "cannot write standard output";
  for (const std::string label : {"", "--label "}) {
    const auto o = run("sh -c '" + squallrun + " -n 2 " + label + scenarios + " compute 0 0 >/dev/full'");
    EXPECT_NE(o.status, 0) << label << "\n" << o.output;
    EXPECT_EQ(count_of(o.output, said), 1) << label << "\n" << o.output;
    EXPECT_NE(o.output.find(std::string(std::strerror(ENOSPC)) + "\n"), std::string::npos) << label << "\n" << o.output;
  }
}

TEST(Launcher, BadFlagsAreRejected) {
  for (const std::string args : {"-n 0 /bin/true", "-n abc /bin/true", "-n 2", "/bin/true",
                                  "-n 2 --aggregation 0 /bin/true", "-n 2 --ring-bytes 100000 /bin/true",
                                  "-n 2 --bogus /bin/true", "--nodes=0 /bin/true", "-n", "-n 2 --grace",
                                  "-n 2 --label=1 /bin/true", "-n 2 --stats=bogus /bin/true", "-n 2 --transport=udp /bin/true", "-n 2 -x /bin/true",
                                  "--version=2", "-n 2 --label=1 /bin/true"}) {
    const auto o = run(squallrun + " " + args);
    EXPECT_EQ(o.status, 2) << args << "\n" << o.output;
    EXPECT_NE(o.output.find("squallrun: "), std::string::npos) << args << "\n" << o.output;
  }
}

// A host list that is empty or ends in a comma, or a host index with no list, would make a
// job of this host alone (or of fewer hosts) while the others wait for it.
TEST(Launcher, HostOptionsWithoutAUsableListAreRefused) {
  const std::string cases[][2] = {
      {"--hosts '' -n 2 /bin/true", "squallrun: --hosts is empty"},
      {"SQUALL_HOSTS= " + squallrun + " -n 2 /bin/true", "squallrun: SQUALL_HOSTS is empty"},
      {"--host-index 0 -n 2 /bin/true", "squallrun: --host-index says which host of --hosts"},
      {"SQUALL_HOST_INDEX=1 " + squallrun + " -n 2 /bin/true", "squallrun: SQUALL_HOST_INDEX says which host"},
      {"--hosts 127.0.0.1, -n 2 /bin/true", "an empty item (a comma too many?)"},
      {"--hosts ,127.0.0.1 -n 2 /bin/true", "an empty item (a comma too many?)"},
      {"--hosts 127.0.0.1,,127.0.0.2 -n 2 /bin/true", "an empty item (a comma too many?)"}};
  for (const auto& [args, said] : cases) {
    const std::string command = args.starts_with("SQUALL_") ? args : squallrun + " " + args;
    const auto o = run("SQUALL_JOB_SECRET=" + std::string(64, 'a') + " " + command);
    EXPECT_EQ(o.status, 2) << args << "\n" << o.output;
    EXPECT_NE(o.output.find(said), std::string::npos) << args << "\n" << o.output;
  }
}

// The program is looked for once, as execvp would, before any node starts: one message.
TEST(Launcher, ProgramThatCannotRunIsOneMessage) {
  char text_file[] = "/tmp/squall-not-executable-XXXXXX";
  close(mkstemp(text_file));
  const std::string cases[][2] = {{"/nonexistent/program", "No such file or directory"},
                                  {"./no-such-program", "No such file or directory"},
                                  {"no-such-program-on-the-path", "not found in PATH"},
                                  {"/tmp", "Is a directory"},
                                  {text_file, "Permission denied"}};
  for (const auto& [program, reason] : cases) {
    const auto o = run(squallrun + " -n 4 " + program + " arg");
    EXPECT_NE(o.status, 0) << program;
    EXPECT_EQ(o.output, "squallrun: cannot run '" + program + "': " + reason + "\n") << program;
  }
  std::remove(text_file);
  const auto on_path = run(squallrun + " -n 2 true");
  EXPECT_EQ(on_path.status, 0) << on_path.output;
}

// Every GNU form of an option's value means the same; options end at the program's name or
// at "--", and the program's own options, however they look, are passed on untouched.
TEST(Launcher, GnuOptionFormsAreEquivalent) {
  const std::string program = " sh -c 'echo node $SQUALL_NODE of $SQUALL_NODES: \"$*\"' sh -n 5 --nodes=7 -- --stats";
  for (const std::string nodes : {"-n 3", "-n3", "--nodes 3", "--nodes=3", "--grace=1 --nodes=3 --",
                                   "--stats -n3 --aggregation=8 --ring-bytes 65536 --transport=shm"}) {
    const auto o = run(squallrun + " " + nodes + program);
    EXPECT_EQ(o.status, 0) << nodes << "\n" << o.output;
    EXPECT_EQ(count_of(o.output, " of 3: -n 5 --nodes=7 -- --stats\n"), 3) << nodes << "\n" << o.output;
    EXPECT_EQ(count_of(o.output, "\n"), 3) << nodes << "\n" << o.output;
  }
}

TEST(Launcher, VersionIsPrinted) {
  const auto o = run(squallrun + " --version");
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_TRUE(squall::test::match_whole(o.output, "squallrun \\(Squall\\) [0-9]+\\.[0-9]+\\.[0-9]+\n")) << o.output;
}

TEST(Launcher, HelpListsEveryOption) {
  for (const std::string flag : {"-h", "--help"}) {
    const auto o = run(squallrun + " " + flag);
    EXPECT_EQ(o.status, 0) << o.output;
    for (const std::string option : {"-n, --nodes N", "--aggregation K", "--stats[=FORMS]", "--transport shm|tcp|ucx",
                                      "--ring-bytes B", "--grace S", "--hosts A,B,...", "--host-index K",
                                      "--make-secret", "--label", "--version", "-h, --help"}) {
      // The option, then its text on the same line or (a long option) on the next.
      const bool listed = o.output.find("  " + option + " ") != std::string::npos ||
                          o.output.find("  " + option + "\n") != std::string::npos;
      EXPECT_TRUE(listed) << flag << ": " << option << "\n" << o.output;
    }
  }
}

// The lines of `text`, each without its newline; the last one only if it has a newline.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  for (std::size_t start = 0, nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    lines.push_back(text.substr(start, nl - start));
  }
  return lines;
}

// Every node writes many lines quickly to stdout and to stderr, then a last line without a
// newline: every line comes out whole, labelled with its node, none lost, each stream's in
// its order.
TEST(Label, EveryLineOfEachNodeIsLabelled) {
  const int nodes = 3, count = 20000;
  const std::string program = " sh -c 'seq -f \"out %g\" " + std::to_string(count) + "; seq -f \"err %g\" " +
                              std::to_string(count) + " >&2; printf \"partial $SQUALL_NODE\"'";
  for (const std::string label : {" --label -n 3", " -n3 --label", "SQUALL_LABEL=1 -n 3"}) {
    const bool by_env = label.starts_with("SQUALL_");
    const auto o = run(by_env ? "SQUALL_LABEL=1 " + squallrun + " -n 3" + program : squallrun + label + program);
    ASSERT_EQ(o.status, 0) << label << "\n" << o.output.substr(0, 2000);
    EXPECT_EQ(o.output.back(), '\n') << label;
    std::vector<int> out_next(nodes, 1), err_next(nodes, 1), partials(nodes, 0);
    int unlabelled = 0, out_of_order = 0;
    for (const auto& line : lines_of(o.output)) {
      if (line.size() < 4 || line[0] != '[' || line[1] < '0' || line[1] >= '0' + nodes || line.substr(2, 2) != "] ") {
        if (++unlabelled <= 3) ADD_FAILURE() << label << ": an unlabelled line: '" << line << "'";
        continue;
      }
      const auto node = static_cast<std::size_t>(line[1] - '0');
      const std::string text = line.substr(4);
      if (text == "partial " + std::to_string(node)) {
        ++partials[node];
      } else if (text.starts_with("out ") || text.starts_with("err ")) {
        int& next = text[0] == 'o' ? out_next[node] : err_next[node];
        if (text.substr(4) != std::to_string(next)) ++out_of_order;
        ++next;
      } else {
        ADD_FAILURE() << label << ": a line no node wrote: '" << line << "'";
      }
    }
    EXPECT_EQ(unlabelled, 0) << label;
    EXPECT_EQ(out_of_order, 0) << label;
    for (std::size_t k = 0; k < nodes; ++k) {
      EXPECT_EQ(out_next[k], count + 1) << label << ": node " << k;
      EXPECT_EQ(err_next[k], count + 1) << label << ": node " << k;
      EXPECT_EQ(partials[k], 1) << label << ": node " << k;
    }
  }
}

TEST(Label, StdoutAndStderrStayApart) {
  const std::string job = squallrun + " --label -n 2 sh -c \\\"echo to-out; echo to-err >&2\\\"";
  const auto out = run("sh -c \"" + job + " 2>/dev/null\"");
  EXPECT_EQ(out.status, 0) << out.output;
  EXPECT_EQ(count_of(out.output, "] to-out\n"), 2) << out.output;
  EXPECT_EQ(count_of(out.output, "to-err"), 0) << out.output;
  const auto err = run("sh -c \"" + job + " >/dev/null\"");
  EXPECT_EQ(err.status, 0) << err.output;
  EXPECT_EQ(count_of(err.output, "] to-err\n"), 2) << err.output;
  EXPECT_EQ(count_of(err.output, "to-out"), 0) << err.output;
}

// A node killed with its output still in the pipe loses none of it; the lost-node
// detection works as without --label, the survivors' reports labelled.
TEST(Label, OutputOfALostNodeIsKept) {
  const auto o = run(squallrun + " --label -n 3 sh -c 'seq 100000; printf \"last words\"; " +
                     "[ $SQUALL_NODE = 1 ] && kill -9 $$; sleep 0.5'");
  EXPECT_NE(o.status, 0);
  EXPECT_EQ(count_of(o.output, "\n[1] 100000\n"), 1) << o.output.substr(o.output.size() - 2000);
  EXPECT_EQ(count_of(o.output, "[1] last words\n"), 1) << o.output.substr(o.output.size() - 2000);
  EXPECT_NE(o.output.find("squallrun: node 1 (pid"), std::string::npos) << o.output.substr(o.output.size() - 2000);

  const auto lost = run(slow_endings_off + squallrun + " --label -n 4 " + scenarios + " kill-node 2");
  EXPECT_FALSE(lost.hung) << report(lost);
  EXPECT_NE(lost.status, 0) << lost.output;
  EXPECT_NE(lost.output.find("squallrun: node 2 (pid"), std::string::npos) << lost.output;
  for (int k : {0, 1, 3}) {
    const std::string n = std::to_string(k);
    EXPECT_EQ(count_of(lost.output, "[" + n + "] squall: node " + n + ": node 2 was lost (was killed by signal 9"), 1)
        << lost.output;
  }
  EXPECT_EQ(slow_endings_in(lost.output), 0) << lost.output;
}

// A reader of squallrun's output that stops reading (a pager left waiting, a stalled log
// collector) must not stop squallrun from answering signals: the first SIGTERM reaches the
// nodes, which end, and a second one drops the output still waiting and ends squallrun.
// Before, squallrun waited in its write to the full pipe, and read neither signal.
TEST(Label, ReaderThatStopsReadingLeavesSignalsAnswered) {
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  char path[] = "/tmp/squall-test-XXXXXX";
  const int err = mkstemp(path);
  ASSERT_GE(err, 0);
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    dup2(out[1], STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    close(out[0]);
    const std::string command = squallrun + " --label -n 2 sh -c 'echo node pid $$ >&2; exec seq 100000000'";
    execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  close(err);
  // However the test ends: squallrun's group killed (its keeper then ends the nodes), the
  // pipe and the file gone.
  struct cleanup {
    pid_t pid;
    int read_end;
    const char* path;
    bool reaped = false;
    ~cleanup() {
      if (!reaped) {
        kill(-pid, SIGKILL);
        waitpid(pid, nullptr, 0);
      }
      close(read_end);
      std::remove(path);
    }
  } guard{pid, out[0], path};
  const auto errors = [&path] {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  const auto ended_within = [pid](int limit_s, int& status) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(limit_s);
    while (std::chrono::steady_clock::now() < until) {
      if (waitpid(pid, &status, WNOHANG) == pid) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  };
  std::vector<int> nodes;
  const auto started_by = std::chrono::steady_clock::now() + std::chrono::seconds(hang_s);
  while (nodes.size() < 2 && std::chrono::steady_clock::now() < started_by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    nodes.clear();
    for (const auto& m : squall::test::search_all(errors(), "node pid ([0-9]+)\n")) nodes.push_back(std::stoi(m.groups[1]));
  }
  ASSERT_EQ(nodes.size(), 2u) << errors();
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the pipe, and what squallrun holds, fill up
  kill(pid, SIGTERM);
  EXPECT_TRUE(all_end(nodes, hang_s)) << "hung: the nodes still ran " << hang_s << " s after SIGTERM to squallrun\n"
                                      << errors();
  kill(pid, SIGTERM);
  int status = 0;
  const bool ended = ended_within(hang_s, status);
  guard.reaped = ended;
  const std::string said = errors();
  ASSERT_TRUE(ended) << "hung: squallrun still ran " << hang_s << " s after a second SIGTERM\n" << said;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << status << "\n" << said;
  EXPECT_NE(said.find("the rest of it is dropped"), std::string::npos) << said;
}

TEST(Launcher, BadEnvironmentValuesNameTheVariable) {
  for (const std::string env : {"SQUALL_AGGREGATION=abc", "SQUALL_AGGREGATION=0", "SQUALL_SPIN_US=-3",
                                 "SQUALL_STATS=maybe", "SQUALL_PROGRESS_THREAD=2", "SQUALL_QUIET_POLLS=-1",
                                 "SQUALL_LOCK_BIAS=on2", "SQUALL_MAILBOX_DEMOTE=2", "SQUALL_BIND=maybe",
                                 "SQUALL_LIVENESS_S=-1", "SQUALL_LABEL=maybe", "SQUALL_NETWORK=foo",
                                 "SQUALL_RECORD_WRITES=x", "SQUALL_HOME_VIEWS=2", "SQUALL_REMOTE_READS=x",
                                 "SQUALL_TCP_PORT=4100O", "SQUALL_TCP_ADDR=10.0.0", "SQUALL_JOB_SECRET=abc"}) {
    const auto o = run(env + " " + squallrun + " -n 2 " + scenarios + " stats");
    EXPECT_NE(o.status, 0) << env;
    const std::string var = env.substr(0, env.find('='));
    EXPECT_NE(o.output.find(var + " must be"), std::string::npos) << env << "\n" << o.output;
  }
}

// The variables squallrun reads itself are refused as its flags are: "squallrun: ...", status
// 2. (SQUALL_LABEL said "squall: ..." and exited with 1.)
TEST(Launcher, BadLauncherVariablesAreUsageErrors) {
  for (const std::string env : {"SQUALL_LABEL=junk", "SQUALL_GRACE=x", "SQUALL_RING_BYTES=-1", "SQUALL_HOST_INDEX=x"}) {
    const auto o = run(env + " " + squallrun + " -n 2 /bin/true");
    EXPECT_EQ(o.status, 2) << env << "\n" << o.output;
    const std::string var = env.substr(0, env.find('='));
    EXPECT_TRUE(o.output.starts_with("squallrun: " + var + " must be")) << env << "\n" << o.output;
  }
}

// A node that ends cleanly before joining would leave the others in squall::init's barrier
// for ever.
// Over TCP the others are still setting up their connections then (waiting for its endpoint),
// not yet running: they count as joining, and the job ended only at SQUALL_TCP_TIMEOUT, its
// squallrun blaming the first node to give up. That timeout is far past the deadline for a
// hang here, so that it cannot be what ended the job.
TEST(LostNode, NodeExitingBeforeInitIsLost) {
  for (const std::string transport : {"", " --transport tcp"}) {
    const auto o = run(slow_endings_off + squallrun + " -n 4" + transport + " " + scenarios + " exit-before-init 2");
    EXPECT_FALSE(o.hung) << transport << "\n" << report(o);
    EXPECT_NE(o.status, 0) << transport << "\n" << o.output;
    EXPECT_EQ(slow_endings_in(o.output), 0) << transport << "\n" << o.output;
    EXPECT_NE(o.output.find("squallrun: node 2 (pid"), std::string::npos) << transport << "\n" << o.output;
    EXPECT_NE(o.output.find("exited with status 0 before joining the job (it never called squall::init)"),
              std::string::npos)
        << transport << "\n" << o.output;
  }
}

// Two hosts simulated on loopback addresses (as tests/common/loopback_hosts.sh): host 1's
// nodes all end with status 0 without calling squall::init. Its squallrun exited 0 without a
// word, and host 0's nodes waited for them until SQUALL_TCP_TIMEOUT (here far past the
// deadline for a hang). Host 1's squallrun now fails saying so, and its stand-in tells host
// 0's nodes at once.
TEST(LostNode, HostWhoseNodesAllExitBeforeInitIsReported) {
  const std::string secret = run(squallrun + " --make-secret").output.substr(0, 64);
  const std::string host = "SQUALL_JOB_SECRET=" + secret + " SQUALL_TCP_PORT=30660 " + slow_endings_off + squallrun +
                           " -n 2 --hosts 127.0.0.1,127.0.0.2 --host-index ";
  background waiting(host + "0 " + scenarios + " stats");
  // The stand-in tells the nodes it reaches within 2 s (transport/tcp/setup_watch.hpp): host
  // 0's nodes listen first.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(hang_s);
  while (count_of(run("ss -Hltn").output, "127.0.0.1:3066") < 2 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(count_of(run("ss -Hltn").output, "127.0.0.1:3066"), 2)
      << "hung: host 0's nodes did not listen within " << hang_s << " s\n" << waiting.output();
  const auto gone = run(host + "1 /bin/true");
  const auto waited = waiting.finish(waiting.seconds_so_far() + hang_s);
  EXPECT_FALSE(gone.hung) << report(gone);
  EXPECT_FALSE(waited.hung) << report(waited);
  EXPECT_NE(gone.status, 0) << gone.output;
  EXPECT_NE(gone.output.find("squallrun: every node of this host (2, 3) exited with status 0 before joining the job"),
            std::string::npos)
      << gone.output;
  EXPECT_NE(waited.status, 0) << waited.output;
  EXPECT_EQ(slow_endings_in(waited.output), 0) << waited.output;
  // The node lost is the first of host 1's to end, either.
  EXPECT_EQ(squall::test::search_all(waited.output, "node [23] was lost").size(), 2u) << waited.output;
  EXPECT_NE(waited.output.find("before joining the job"), std::string::npos) << waited.output;
}

// A node late to join is waited for, and said to be late once by every other node.
TEST(Liveness, NodeLateToJoinIsSaidButWaitedFor) {
  const auto o = run("SQUALL_LIVENESS_S=1 " + squallrun + " -n 3 " + scenarios + " sleep-before-init 1 3");
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_EQ(count_of(o.output, "node 1 has not joined the job"), 2) << o.output;
}

// Over TCP the survivors see a lost node's connections close, or a peer's word, before the
// launcher reaps it; for a node of their own host they wait for the launcher's verdict and
// say how it ended, as over shared memory (they used to say "its TCP connection ... was closed
// before the node finished").
TEST(LostNode, KilledNodeOverTcpIsDescribedByTheLauncher) {
  const auto o = run("SQUALL_TRANSPORT=tcp " + slow_endings_off + squallrun + " -n 4 " + scenarios + " kill-node 1");
  EXPECT_FALSE(o.hung) << report(o);
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("squallrun: node 1 (pid"), std::string::npos) << o.output;
  EXPECT_EQ(count_of(o.output, "node 1 was lost (was killed by signal 9"), 3) << o.output;
  EXPECT_EQ(count_of(o.output, "TCP connection"), 0) << o.output;
}

// Two loopback hosts of 2 nodes (port 30700 on), node 2 killed: its host-mate hears how from
// its squallrun, and the other host's nodes, which see node 2's connection close first, wait
// for the host-mate's ending frame and say the same. They named the connection ("its TCP
// connection from ... failed: Connection reset by peer"), and the host-mate repeated them.
TEST(LostNode, KilledNodeIsDescribedOnEveryHost) {
  const auto o = run(slow_endings_off + LOOPBACK_HOSTS_PATH + " " + squallrun + " 2 2 30700 " + scenarios +
                     " kill-node 2");
  EXPECT_FALSE(o.hung) << report(o);
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_EQ(count_of(o.output, "node 2 was lost (was killed by signal 9"), 3) << o.output;
  EXPECT_EQ(count_of(o.output, "TCP connection"), 0) << o.output;
}

// Standard input (or output) closed when squallrun starts: the job's memory must not take
// its number, which a node's redirection would then close.
TEST(Launcher, StandardStreamsClosedAtStart) {
  for (const std::string closed : {"<&-", "<&- >&-"}) {
    const auto o = run("sh -c 'exec " + squallrun + " -n 2 " + scenarios + " stats " + closed + "'");
    EXPECT_EQ(o.status, 0) << closed << "\n" << o.output;
  }
}

// A wrapper between squallrun and the program that closes the descriptors it inherits (as
// Python's subprocess does by default) takes the job's memory away: the node says so, rather
// than that it was not started by squallrun, or, the number since naming another file, that
// the memory cannot be mapped.
TEST(Launcher, JobDescriptorClosedByAWrapperIsNamed) {
  for (const std::string redirect : {"<&-", "</dev/null"}) {
    const auto o = run(squallrun + " -n 2 sh -c 'eval \"exec $SQUALL_JOB_FD" + redirect + "\"; exec " + scenarios +
                       " stats'");
    EXPECT_NE(o.status, 0) << redirect << "\n" << o.output;
    EXPECT_EQ(o.output.find("start the program with squallrun"), std::string::npos) << redirect << "\n" << o.output;
    EXPECT_EQ(o.output.find("cannot map"), std::string::npos) << redirect << "\n" << o.output;
    EXPECT_NE(o.output.find("something between squallrun and the program closed it"), std::string::npos)
        << redirect << "\n" << o.output;
  }
}

// The first SIGINT is passed on; nodes that ignore it are killed by the second, and said to
// be killed by squallrun, not by a signal 9 from elsewhere.
TEST(Launcher, SecondInterruptKillsNodesThatIgnoreTheFirst) {
  background job(squallrun + " -n 3 " + scenarios + " ignore-signals");
  ASSERT_TRUE(job.wait_for_output(" up\n", 3, hang_s)) << job.output();
  ASSERT_EQ(kill(job.pid(), SIGINT), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(kill(job.pid(), SIGINT), 0);
  const auto o = job.finish(job.seconds_so_far() + hang_s);
  EXPECT_FALSE(o.hung) << report(o);
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("signalled again; killing the nodes"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("was killed by squallrun, signalled again"), std::string::npos) << o.output;
  EXPECT_EQ(count_of(o.output, "signal 9"), 0) << o.output;
}

// SIGINT reaches what the nodes started, not only the nodes: each node here is a shell that
// runs its command without exec and waits for it (as sh does on SIGINT while a command runs),
// so the command must have the signal itself for the job to end. It says "up" itself, so
// it is running when the signal comes. Before, the job ran on until the command ended.
// Started with SIGINT ignored too, as a shell starts a command in the background.
TEST(Launcher, InterruptReachesWhatTheNodesStarted) {
  for (const std::string start : {"", "env --ignore-signal=INT "}) {
    background job(start + squallrun + " -n 2 sh -c 'sh -c \"echo up; exec sleep 300\"; true'");
    ASSERT_TRUE(job.wait_for_output("up\n", 2, hang_s)) << start << "\n" << job.output();
    ASSERT_EQ(kill(job.pid(), SIGINT), 0);
    const auto o = job.finish(job.seconds_so_far() + hang_s);
    EXPECT_FALSE(o.hung) << start << "\n" << report(o);
    EXPECT_EQ(o.status, 128 + SIGINT) << start << "\n" << o.output;
    EXPECT_NE(o.output.find("was killed by signal 2"), std::string::npos) << start << "\n" << o.output;
  }
}

// A job area larger than the host's memory is refused with the launcher's message, before
// any of it is taken: tmpfs would give pages until the kernel's out-of-memory killer ended
// some program. Should that check ever be lost, squallrun is made the killer's first choice
// (and dies before any node exists, freeing the area), so that nothing else is.
TEST(Launcher, JobAreaLargerThanMemoryIsRefused) {
  const double memory = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  if (memory >= 200.0 * (1 << 30)) GTEST_SKIP() << "this host has room for 1,024 nodes' rings (256 GiB)";
  const auto o = run("sh -c 'echo 1000 > /proc/self/oom_score_adj; exec " + squallrun + " -n 1024 true'");
  EXPECT_NE(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("cannot reserve the job's shared memory"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("of memory available"), std::string::npos) << o.output;
}

// The pids that "child P" lines name (a node script's background process).
std::vector<int> child_pids(const std::string& output) {
  std::vector<int> pids;
  for (const auto& m : squall::test::search_all(output, "child ([0-9]+)\n")) pids.push_back(std::stoi(m.groups[1]));
  return pids;
}

// What a node started is ended with the job: left behind by a node that ended cleanly, or
// orphaned when a node script that ignores SIGTERM and does not exec its command is killed
// after the grace period (the command ignoring SIGTERM too); the job's status is still the
// lost node's. (The background commands write elsewhere: run() reads its pipe to the end.)
TEST(Launcher, ProcessesANodeStartedEndWithTheJob) {
  struct job_case {
    std::string job;
    int status;
    std::size_t nodes;
  };
  const std::string leave_one = "sleep 300 >/dev/null 2>&1 & echo child $!";
  for (const auto& [job, status, nodes] :
       {job_case{"-n 2 sh -c '" + leave_one + "'", 0, 2},
        job_case{"-n 3 --grace 1 sh -c 'trap \"\" TERM INT HUP; " + leave_one +
                     "; [ \"$SQUALL_NODE\" = 1 ] && exit 3; wait'",
                 3, 3}}) {
    const auto o = run(squallrun + " " + job);
    EXPECT_EQ(o.status, status) << job << "\n" << o.output;
    const auto pids = child_pids(o.output);
    EXPECT_EQ(pids.size(), nodes) << job << "\n" << o.output;
    for (int pid : pids) {
      if (!running(pid)) continue;
      ADD_FAILURE() << job << ": process " << pid << " outlived the job\n" << o.output;
      kill(pid, SIGKILL);
    }
    EXPECT_NE(o.output.find(" process(es) running; stopping them"), std::string::npos) << job << "\n" << o.output;
  }
}

// A process that a node started and that ends by itself just after the node (as a sanitizer's
// symbolizer does when the node reading it has ended) is not a leftover: the job's output
// ends with the program's, with no notice of processes stopped.
TEST(Launcher, AProcessEndingJustAfterItsNodeIsNotALeftover) {
  const auto o = run(squallrun + " -n 2 sh -c 'sleep 0.05 >/dev/null 2>&1 & echo done'");
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_EQ(o.output.find("process(es) running"), std::string::npos) << o.output;
  EXPECT_EQ(squall::test::search_all(o.output, "done\n").size(), 2u) << o.output;
}

// squallrun killed outright (SIGKILL, which it cannot catch): its nodes die with it, and
// so does every process they started, which would otherwise run on as an orphan. Each node
// is a shell that does not exec its command and starts three: one its own child, two left by
// subshells that ended (so already squallrun's, their subreaper's), of which one ignores
// SIGTERM (so needs SIGKILL after the grace period). Before, only the nodes ended.
TEST(LostLauncher, ProcessesTheNodesStartedEndWhenSquallrunIsKilled) {
  const std::string start = "sleep 300 >/dev/null 2>&1 & echo child $!; ";
  background job(squallrun + " -n 2 --grace 1 sh -c 'echo child $$; " + start +
                 "(trap \"\" TERM; " + start + "); (" + start + "); echo up; wait'");
  ASSERT_TRUE(job.wait_for_output("up\n", 2, hang_s)) << job.output();
  const auto pids = child_pids(job.output());
  ASSERT_EQ(pids.size(), 8u) << job.output();
  for (int pid : pids) ASSERT_TRUE(running(pid)) << pid << "\n" << job.output();
  ASSERT_EQ(kill(job.pid(), SIGKILL), 0);
  const bool ended = all_end(pids, hang_s);
  EXPECT_TRUE(ended) << "hung: process(es) of the job still ran " << hang_s << " s after squallrun was killed\n"
                     << job.output();
  for (int pid : pids) {
    if (running(pid)) kill(pid, SIGKILL);
  }
}

// The processes whose process group is `group` and that have not ended.
std::vector<int> processes_in_group(int group) {
  std::vector<int> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text;
    if (!std::getline(stat, text)) continue;
    const auto paren = text.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream rest(text.substr(paren + 2));
    char state = 0;
    int parent = 0, pgrp = 0;
    if (rest >> state >> parent >> pgrp && pgrp == group && state != 'Z' && state != 'X') found.push_back(std::stoi(name));
  }
  return found;
}

// The nodes run in a process group of their own, led by the process that ends it should
// squallrun be killed (the keeper); when squallrun ends normally nothing of that group is
// left, the keeper included, and the job's status is the nodes'.
TEST(Launcher, NothingOfTheJobsProcessGroupOutlivesItsEnd) {
  const auto o = run(squallrun + " -n 2 sh -c 'echo group $(cut -d\" \" -f5 /proc/$$/stat); exit 0'");
  EXPECT_EQ(o.status, 0) << o.output;
  const auto groups = squall::test::search_all(o.output, "group ([0-9]+)\n");
  ASSERT_EQ(groups.size(), 2u) << o.output;
  for (const auto& m : groups) {
    const int group = std::stoi(m.groups[1]);
    for (int pid : processes_in_group(group)) {
      ADD_FAILURE() << "process " << pid << " of the job's process group " << group << " outlived squallrun\n" << o.output;
    }
  }
}

// A node script (for a node's sh -c '...') that starts three processes that leave the job's
// process group and session: one by `setsid` in the background, two as a daemon does (a
// double fork: a subshell starts it and ends), of which one ignores SIGTERM. Each writes its
// pid as a file's name in `dir` (so that the test knows it, whatever setsid forks) and then
// is a sleep; the node says "up" once all three run, and then does `then`.
std::string start_escaped(const std::string& dir, const std::string& then) {
  const auto escape = [&dir](const std::string& first) {
    return "setsid sh -c \"" + first + "touch " + dir + "/\\$\\$; exec sleep 300 >/dev/null 2>&1\" &";
  };
  return "sh -c '" + escape("") + " (" + escape("") + ") ; (" + escape("trap \\\"\\\" TERM; ") +
         "); until [ $(ls " + dir + " | wc -l) -ge 3 ]; do sleep 0.1; done; " + then + "'";
}

// The pids that start_escaped's processes wrote in `dir`, which is then removed.
std::vector<int> escaped_pids(const std::string& dir) {
  std::vector<int> pids;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) pids.push_back(std::stoi(entry.path().filename()));
  std::filesystem::remove_all(dir);
  return pids;
}

// The session that process `pid` belongs to (0: none found).
int session_of(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text) || text.rfind(')') == std::string::npos) return 0;
  std::istringstream rest(text.substr(text.rfind(')') + 2));
  char state = 0;
  int parent = 0, group = 0, session = 0;
  return rest >> state >> parent >> group >> session ? session : 0;
}

// A process that a node started and that left the job's process group (setsid, a daemon)
// ends with the job all the same: nothing of it outlives squallrun.
TEST(Launcher, ProcessesThatLeftTheJobsProcessGroupEndWithTheJob) {
  char dir[] = "/tmp/squall-escaped-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const auto o = run(squallrun + " -n 1 --grace 1 " + start_escaped(dir, "echo up; exit 0"));
  const auto pids = escaped_pids(dir);
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_EQ(count_of(o.output, "up\n"), 1) << o.output;
  EXPECT_EQ(pids.size(), 3u) << o.output;
  for (int pid : pids) {
    if (!running(pid)) continue;
    ADD_FAILURE() << "process " << pid << ", which left the job's process group, outlived squallrun\n" << o.output;
    kill(pid, SIGKILL);
  }
}

// The same with squallrun killed outright mid-job: the keeper, which knew those processes
// while squallrun ran, ends them (the one that ignores SIGTERM after the grace period).
// Before, they ran on as init's. The node waits 2 s after "up" before it lets the test go
// on: the keeper looks for the job's processes a few times a second.
TEST(LostLauncher, ProcessesThatLeftTheJobsProcessGroupEndWhenSquallrunIsKilled) {
  char dir[] = "/tmp/squall-escaped-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  background job(squallrun + " -n 1 --grace 1 " + start_escaped(dir, "sleep 2; echo up; wait"));
  const bool up = job.wait_for_output("up\n", 1, hang_s);
  const auto pids = escaped_pids(dir);
  ASSERT_TRUE(up) << job.output();
  ASSERT_EQ(pids.size(), 3u) << job.output();
  for (int pid : pids) {
    EXPECT_TRUE(running(pid)) << pid << "\n" << job.output();
    EXPECT_EQ(session_of(pid), pid) << "process " << pid << " did not leave the job's session\n" << job.output();
  }
  ASSERT_EQ(kill(job.pid(), SIGKILL), 0);
  EXPECT_TRUE(all_end(pids, hang_s)) << "hung: process(es) that left the job's process group still ran " << hang_s
                                     << " s after squallrun was killed\n" << job.output();
  for (int pid : pids) {
    if (running(pid)) kill(pid, SIGKILL);
  }
}

// A command run as the session leader of a new terminal, whose foreground process group it
// then leads, as a shell's foreground job does; the test types and reads at the other end.
class on_a_terminal {
 public:
  explicit on_a_terminal(std::vector<std::string> args) {
    pid_ = forkpty(&master_, nullptr, nullptr, nullptr);
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  on_a_terminal(const on_a_terminal&) = delete;
  on_a_terminal& operator=(const on_a_terminal&) = delete;
  ~on_a_terminal() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (master_ >= 0) close(master_);
  }
  bool started() const { return pid_ > 0; }
  void type(const std::string& keys) { ASSERT_EQ(write(master_, keys.data(), keys.size()), static_cast<ssize_t>(keys.size())); }
  // Reads the terminal until `what` has come `times` times, it is closed (every process of
  // it has ended) or `limit_s` seconds have passed.
  bool read_until(const std::string& what, int times, int limit_s) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(limit_s);
    while (count_of(output_, what) < times && std::chrono::steady_clock::now() < until) {
      pollfd fd{master_, POLLIN, 0};
      if (poll(&fd, 1, 50) <= 0) continue;
      char buf[512];
      const ssize_t n = read(master_, buf, sizeof buf);
      if (n <= 0) break;  // EIO: closed
      output_.append(buf, static_cast<std::size_t>(n));
    }
    return count_of(output_, what) >= times;
  }
  // Whether the command ended within `limit_s` seconds (reading what it printed meanwhile).
  bool ends(int limit_s) {
    read_until("\x01", 1, limit_s);  // never printed: until the terminal is closed
    for (int i = 0; i < 50; ++i) {  // closed as it ends, before it can be reaped
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  const std::string& output() const { return output_; }

 private:
  pid_t pid_ = -1;
  int master_ = -1;
  std::string output_;
};

// squallrun in the foreground of a terminal lends it to the job's process group: node 0
// reads what is typed, where a process of a background group would be stopped (SIGTTIN).
TEST(Launcher, TerminalIsLentToTheJob) {
  on_a_terminal job({squallrun, "-n", "2", "sh", "-c",
                     "echo up; if [ \"$SQUALL_NODE\" = 0 ]; then read line; echo read-$line; fi"});
  ASSERT_TRUE(job.started()) << std::strerror(errno);
  ASSERT_TRUE(job.read_until("up\r\n", 2, hang_s)) << job.output();
  job.type("hello\n");
  EXPECT_TRUE(job.read_until("read-hello", 1, hang_s)) << "node 0 could not read the terminal\n" << job.output();
  EXPECT_TRUE(job.ends(hang_s)) << "hung: still running after " << hang_s << " s\n" << job.output();
}

// Ctrl-C on squallrun's terminal reaches each node exactly once: the terminal sends it to
// the job's group, and the keeper to squallrun's, and squallrun, which counts it once, passes
// it on only beyond both.
TEST(Launcher, CtrlCReachesEachNodeOnce) {
  on_a_terminal job({squallrun, "-n", "3", scenarios, "count-interrupts"});
  ASSERT_TRUE(job.started()) << std::strerror(errno);
  ASSERT_TRUE(job.read_until(" up\r\n", 3, hang_s)) << job.output();
  job.type("\x03");
  EXPECT_TRUE(job.ends(hang_s)) << "hung: still running " << hang_s << " s after ^C\n" << job.output();
  for (int node = 0; node < 3; ++node) {
    EXPECT_EQ(count_of(job.output(), "node " + std::to_string(node) + " had 1 interrupt(s)"), 1) << job.output();
  }
  EXPECT_EQ(count_of(job.output(), "signalled again"), 0) << job.output();
}

// ^Z where squallrun leads its terminal's session (as under `ssh -t host squallrun ...`):
// no shell could continue it, so the kernel does not stop it (its process group is orphaned),
// and the job, which the terminal did stop, is continued too, rather than left stopped.
TEST(Launcher, CtrlZWithNoShellToContinueTheJobLeavesItRunning) {
  on_a_terminal job({squallrun, "-n", "2", "sh", "-c", "for i in 1 2 3 4 5 6 7 8; do echo tick-$i; sleep 0.2; done"});
  ASSERT_TRUE(job.started()) << std::strerror(errno);
  ASSERT_TRUE(job.read_until("tick-2\r\n", 2, hang_s)) << job.output();
  job.type("\x1a");
  EXPECT_TRUE(job.ends(hang_s)) << "hung: the job was stopped\n" << job.output();
  EXPECT_EQ(count_of(job.output(), "tick-8"), 2) << job.output();
}

TEST(Launcher, ProgramWithoutLauncherIsOneNode) {
  const auto o = run(scenarios + " stats");
  EXPECT_EQ(o.status, 0) << o.output;
}

}  // namespace
