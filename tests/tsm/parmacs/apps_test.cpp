// SPDX-License-Identifier: BSD-3-Clause
// The PARMACS programs of apps/parmacs/ print the same checksum on 2, 4 and 8 nodes (as
// many processes as nodes) as on one, on the default (thread) fault path, and on 4 nodes on
// the SIGBUS path and with 8 messages per packet; and with two workers per node as threads,
// on one node and on two; and across simulated hosts. RadixUnderMultipleWriter (a ctest entry of
// its own): radix on 4 nodes with every segment under the multiple-writer protocol
// (SQUALL_TSM_PROTOCOL) prints the one-node checksum. A malformed option is refused.
#include <gtest/gtest.h>

#include <algorithm>

#include <string>

#include "run_command.hpp"
#include "stats_json.hpp"

namespace {

using squall::test::run;

// The text after "checksum:" on the last line that has it ("" if none).
std::string checksum_of(const std::string& output) {
  const auto at = output.rfind("checksum:");
  if (at == std::string::npos) return "";
  const auto end = output.find('\n', at);
  return output.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// Runs a program's command line, which must succeed and pass the program's own checks, and
// returns its checksum line (across hosts only host 0's node prints one: "[host 0] checksum:").
std::string checksum_of_run(const std::string& command, const std::string& what) {
  const auto r = run(command, 300);
  EXPECT_EQ(r.status, 0) << what << "\n" << r.output;
  EXPECT_EQ(r.output.find("DOES NOT"), std::string::npos) << what << ": a program's own check failed\n" << r.output;
  std::printf("%s: %.1f s, %s\n", what.c_str(), r.seconds, checksum_of(r.output).c_str());
  return checksum_of(r.output);
}

// `per_node` workers on each node (threads sharing the node's memory), so nodes * per_node
// processes.
std::string run_on(const char* program, int nodes, const std::string& env = "", int per_node = 1) {
  return checksum_of_run(env + " SQUALL_WORKERS_PER_NODE=" + std::to_string(per_node) + " " + SQUALLRUN + " -n " +
                             std::to_string(nodes) + " " + program + " -p" + std::to_string(nodes * per_node),
                         std::string(program) + " on " + std::to_string(nodes) + " nodes of " +
                             std::to_string(per_node) + (env.empty() ? "" : " (" + env + ")"));
}

void same_everywhere(const char* program) {
  const std::string one = run_on(program, 1);
  ASSERT_FALSE(one.empty()) << program << " printed no checksum";
  for (int n : {2, 4, 8}) EXPECT_EQ(run_on(program, n), one) << program << " on " << n << " nodes";
  EXPECT_EQ(run_on(program, 4, "SQUALL_FAULT_PATH=sigbus"), one) << program << " on the SIGBUS path";
  // Aggregated messages on more nodes than cores: a protocol answer left in a partly filled
  // packet hung the job.
  EXPECT_EQ(run_on(program, 4, "SQUALL_AGGREGATION=8"), one) << program << " with aggregation";
  // Workers as threads: one node of two (no protocol between them), and two nodes of two.
  EXPECT_EQ(run_on(program, 1, "", 2), one) << program << " on one node of 2 threads";
  EXPECT_EQ(run_on(program, 2, "", 2), one) << program << " on 2 nodes of 2 threads";
  EXPECT_EQ(run_on(program, 2, "SQUALL_FAULT_PATH=sigbus", 2), one) << program << " on 2 nodes of 2 threads, SIGBUS path";
}

// Across simulated hosts (tests/common/loopback_hosts.sh, TCP between them): 2 hosts of one
// node of 2 workers, and 4 hosts of one node of one. Ports 30300 and up.
std::string run_on_hosts(const char* program, int hosts, int per_node) {
  return checksum_of_run("SQUALL_WORKERS_PER_NODE=" + std::to_string(per_node) + " " + LOOPBACK_HOSTS + " " +
                             SQUALLRUN + " " + std::to_string(hosts) + " 1 30300 " + program + " -p" +
                             std::to_string(hosts * per_node),
                         std::string(program) + " on " + std::to_string(hosts) + " hosts of " + std::to_string(per_node));
}

TEST(ParmacsApps, ChecksumsAcrossSimulatedHostsAreTheOneNodeChecksums) {
  for (const char* program : {SOR, RADIX, NBODY, FFT, LU}) {
    const std::string one = run_on(program, 1);
    ASSERT_FALSE(one.empty()) << program << " printed no checksum";
    EXPECT_EQ(run_on_hosts(program, 2, 2), one) << program << " on 2 hosts of 2 workers";
    EXPECT_EQ(run_on_hosts(program, 4, 1), one) << program << " on 4 hosts of 1 worker";
  }
}

// A malformed number, or omega outside (0, 2), is refused with one line naming the option
// and the text: atol took "1x" as 1 and atof "abc" as 0, and omega 99 diverged, all with exit 0.
// The status is 2, a command-line error's in every program of the project (it was 1).
TEST(ParmacsApps, BadOptionsAreRefused) {
  const std::string cases[][3] = {
      {SOR, "-p1x", "sor: -p must be a whole number (got '1x')"},
      {SOR, "-wabc", "sor: -w must be a number (got 'abc')"},
      {SOR, "-wnan", "sor: -w must be a number (got 'nan')"},
      {SOR, "-w99", "0 < omega < 2"},
      {SOR, "-w0", "0 < omega < 2"},
      {SOR, "-n 99999999999999999999", "sor: -n must be a whole number (got '99999999999999999999')"},
      {FFT, "-m16x", "fft: -m must be a whole number (got '16x')"},
      {LU, "-b ' 4'", "lu: -b must be a whole number (got ' 4')"},
      {NBODY, "-s4.5", "nbody: -s must be a whole number (got '4.5')"},
      {RADIX, "-r256k", "radix: -r must be a whole number (got '256k')"},
      {RADIX, "-r 9223372036854775807", "radix: need keys >= 1, radix a power of 2 from 2 to 65536"}};
  for (const auto& [program, args, said] : cases) {
    const auto r = run(program + " " + args, 60);
    EXPECT_EQ(r.status, 2) << program << " " << args << "\n" << r.output;
    EXPECT_NE(r.output.find(said), std::string::npos) << program << " " << args << "\n" << r.output;
    EXPECT_EQ(r.output.find("checksum:"), std::string::npos) << program << " " << args << "\n" << r.output;
  }
}

TEST(ParmacsApps, SorChecksumIsTheOneNodeChecksum) { same_everywhere(SOR); }
TEST(ParmacsApps, RadixChecksumIsTheOneNodeChecksum) { same_everywhere(RADIX); }
TEST(ParmacsApps, NbodyChecksumIsTheOneNodeChecksum) { same_everywhere(NBODY); }
TEST(ParmacsApps, FftChecksumIsTheOneNodeChecksum) { same_everywhere(FFT); }
TEST(ParmacsApps, LuChecksumIsTheOneNodeChecksum) { same_everywhere(LU); }

// The workers of one node share its memory in hardware: SOR's workers read each other's
// boundary rows every iteration, yet on one node of two threads no block moves and no
// protocol message goes (the only misses are the first touches of blocks homed there, each
// served in place), and on two nodes of two threads only the boundary between the nodes
// costs misses, well under half of what four nodes of one pay for three boundaries.
TEST(ParmacsApps, WorkersOfANodeShareItsMemoryWithoutTheProtocol) {
  auto stats_of = [](int nodes, int per_node) {
    const std::string json = ::testing::TempDir() + "sor_stats.json";
    const auto r = run("SQUALL_STATS=json:" + json + " SQUALL_WORKERS_PER_NODE=" + std::to_string(per_node) + " " +
                           SQUALLRUN + " -n " + std::to_string(nodes) + " " + SOR + " -p" + std::to_string(nodes * per_node),
                       300);
    EXPECT_EQ(r.status, 0) << r.output;
    return squall::test::stats_json(json);
  };
  const auto one_node = stats_of(1, 2);
  ASSERT_EQ(one_node.nodes, 1);
  for (const char* moved : {"tsm.upgrades", "tsm.invalidations_sent", "tsm.invalidations_received", "tsm.retries"}) {
    EXPECT_EQ(one_node.total(moved), 0u) << moved;
  }
  const std::uint64_t first_touches = one_node.total("tsm.read_misses") + one_node.total("tsm.write_misses");
  EXPECT_GT(first_touches, 0u);
  EXPECT_EQ(first_touches, one_node.total("tsm.requests_served")) << "each served in place, at the home";
  for (const auto& [name, h] : one_node.handlers) {
    if (name.find("stache") == std::string::npos) continue;
    std::uint64_t received = 0;
    for (auto v : h.received) received += v;
    EXPECT_EQ(received, 0u) << name << ": a protocol message";
  }

  const auto misses = [](const squall::test::stats_json& j) {
    return j.total("tsm.read_misses") + j.total("tsm.upgrades") + j.total("tsm.invalidations_sent");
  };
  const std::uint64_t four_by_one = misses(stats_of(4, 1));
  // On a loaded machine (CTest's other tests beside it) a run of SOR sometimes takes about 1.7x
  // its usual misses, on this library and the one before (2,138-3,323 against 1,120-1,260): a
  // neighbour's reads fall between the writer's phases differently. What is compared is the
  // fewest of up to three runs.
  std::uint64_t two_by_two = UINT64_MAX;
  for (int run = 0; run < 3 && !(two_by_two < four_by_one / 2); ++run) {
    two_by_two = std::min(two_by_two, misses(stats_of(2, 2)));
  }
  std::printf("misses, upgrades and invalidations: 2 nodes x 2 threads %llu, 4 nodes x 1 %llu\n",
              static_cast<unsigned long long>(two_by_two), static_cast<unsigned long long>(four_by_one));
  EXPECT_GT(two_by_two, 0u);
  EXPECT_LT(two_by_two, four_by_one / 2);
}

// Radix is free of data races (its processes write disjoint words of shared pages between
// barriers and pauses), so release consistency gives it the same result.
// The statistics show that the protocol ran: its diffs went home.
TEST(ParmacsApps, RadixUnderMultipleWriter) {
  const std::string one = run_on(RADIX, 1);
  ASSERT_FALSE(one.empty()) << "radix printed no checksum";
  const auto r = run(std::string("SQUALL_TSM_PROTOCOL=multiple-writer SQUALL_WORKERS_PER_NODE=1 SQUALL_STATS=1 ") + SQUALLRUN +
                         " -n 4 " + RADIX + " -p4", 300);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(checksum_of(r.output), one) << r.output;
  EXPECT_NE(r.output.find("multiple_writer.diffs_applied"), std::string::npos) << r.output;
}

}  // namespace
