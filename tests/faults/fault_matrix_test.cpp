// SPDX-License-Identifier: BSD-3-Clause
// The fault-injection matrix: a node of a running job is killed (SIGKILL) or stopped
// (SIGSTOP) at a random moment while the job takes a TSM lock, serves misses at a home,
// runs CHAOS exchanges or TSM barriers, appends through libxsm, or passes libarrays messages
// among migrating elements (fault_scenarios.cpp), on 2, 4 and 8 nodes, under
// squallrun and under mpirun. Every run must end, every survivor naming the lost node: a
// killed node as its process ended (the silence limit is then far past the deadline for a
// hang, so that it cannot be what noticed), a stopped one as silent for SQUALL_LIVENESS_S.
// SQUALL_FAULT_SEED=S replays a run (the seed is printed with each).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <tuple>

#include "patterns.hpp"
#include "run_command.hpp"

namespace {

using squall::test::background;
using squall::test::count_of;
using squall::test::hang_s;
using squall::test::report;

constexpr int liveness_s = 2;  // SQUALL_LIVENESS_S in the runs whose node is stopped

enum class launcher { squallrun, mpirun };
enum class fault { kill, stop };

std::string command_for(launcher l, fault what, int nodes, const std::string& mode, int victim) {
  const std::string program = std::string(FAULT_SCENARIOS) + " " + mode + " " + std::to_string(victim);
  const std::string env =
      what == fault::stop ? "SQUALL_LIVENESS_S=" + std::to_string(liveness_s) + " " : squall::test::slow_endings_off;
  if (l == launcher::squallrun) return env + SQUALLRUN + " -n " + std::to_string(nodes) + " " + program;
  // Open MPI would end the job itself when a process dies: turned off, so that what ends it
  // is Squall's own detection.
  return env + "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " + MPIEXEC + " -np " +
         std::to_string(nodes) + " --oversubscribe --bind-to none --mca orte_abort_on_non_zero_status 0 " +
         program;
}

int pid_of(const std::string& output, int node) {
  const auto m = squall::test::search(output, "node " + std::to_string(node) + " pid ([0-9]+) ready");
  return m ? std::stoi(m->groups[1]) : -1;
}

// Whether process `pid` is gone (or a zombie) by `deadline`.
bool ended_within(int pid, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string fields;
    if (!std::getline(stat, fields)) return true;
    const auto state = fields.find(") ");
    if (state != std::string::npos && fields[state + 2] == 'Z') return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

using matrix_point = std::tuple<launcher, std::string, fault, int>;

class FaultMatrix : public ::testing::TestWithParam<matrix_point> {};

TEST_P(FaultMatrix, EverySurvivorNamesTheLostNode) {
  const auto [how, mode, what, nodes] = GetParam();
  if (how == launcher::mpirun && std::string(MPIEXEC).empty()) GTEST_SKIP() << "no mpirun";
  const char* replay = std::getenv("SQUALL_FAULT_SEED");
  const unsigned seed = replay != nullptr ? static_cast<unsigned>(std::strtoul(replay, nullptr, 10))
                                          : std::random_device{}();
  std::mt19937 rng(seed);
  const int victim = std::uniform_int_distribution<int>(0, nodes - 1)(rng);
  const int delay_ms = std::uniform_int_distribution<int>(0, 300)(rng);
  SCOPED_TRACE("SQUALL_FAULT_SEED=" + std::to_string(seed) + ": victim node " + std::to_string(victim) +
               " hit " + std::to_string(delay_ms) + " ms after the job ran");

  background job(command_for(how, what, nodes, mode, victim));
  ASSERT_TRUE(job.wait_for_output(" ready", nodes, hang_s)) << "hung: not every node ready after " << hang_s << " s\n"
                                                            << job.output();
  const int pid = pid_of(job.output(), victim);
  ASSERT_GT(pid, 0) << job.output();
  std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  const auto hit = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(pid, what == fault::kill ? SIGKILL : SIGSTOP), 0);

  // A killed node is lost as its process ended: squallrun reaped it, or (under mpirun) the
  // survivors' watch of its process saw it end. A stopped one is silent.
  const std::string v = std::to_string(victim);
  const std::string named =
      what == fault::stop           ? "node " + v + " has not answered"
      : how == launcher::squallrun ? "node " + v + " was lost (was killed by signal 9"
                                   : "node " + v + " was lost (its process ended before squall::finalize)";
  if (how == launcher::squallrun) {
    // squallrun ends once the survivors are out (killing a stopped node after its grace).
    const auto o = job.finish(job.seconds_so_far() + hang_s, hit);
    EXPECT_FALSE(o.hung) << report(o);
    EXPECT_NE(o.status, 0) << o.output;
    EXPECT_EQ(count_of(o.output, named), nodes - 1) << o.output;
    if (what == fault::kill) {
      EXPECT_EQ(squall::test::slow_endings_in(o.output), 0) << o.output;
    }
    return;
  }
  // With orte_abort_on_non_zero_status 0, Open MPI 4.1's mpirun never exits once a process
  // died of a signal (nor while one is stopped): what is checked is that every survivor named
  // the lost node and ended. The job's process group goes at the end.
  EXPECT_TRUE(job.wait_for_output(named, nodes - 1, hang_s))
      << "hung: not every survivor named node " << v << " within " << hang_s << " s\n" << job.output();
  for (int node = 0; node < nodes; ++node) {
    if (node == victim) continue;
    EXPECT_TRUE(ended_within(pid_of(job.output(), node), hit + std::chrono::seconds(hang_s)))
        << "hung: node " << node << " still runs " << hang_s << " s after the fault\n" << job.output();
  }
  if (what == fault::kill) {
    EXPECT_EQ(squall::test::slow_endings_in(job.output()), 0) << job.output();
  }
}

std::string name_of(const ::testing::TestParamInfo<matrix_point>& info) {
  const auto& [how, mode, what, nodes] = info.param;
  return std::string(how == launcher::squallrun ? "squallrun" : "mpirun") + "_" + mode + "_" +
         (what == fault::kill ? "kill" : "stop") + "_n" + std::to_string(nodes);
}

INSTANTIATE_TEST_SUITE_P(Faults, FaultMatrix,
                         ::testing::Combine(::testing::Values(launcher::squallrun, launcher::mpirun),
                                            ::testing::Values("lock", "home", "chaos", "barrier", "append", "arrays"),
                                            ::testing::Values(fault::kill, fault::stop),
                                            ::testing::Values(2, 4, 8)),
                         name_of);

}  // namespace
