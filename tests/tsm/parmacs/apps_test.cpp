// SPDX-License-Identifier: BSD-3-Clause
// The PARMACS programs of apps/parmacs/ print the same checksum on 2, 4 and 8 nodes (as
// many processes as nodes) as on one, on the default (thread) fault path, and on 4 nodes on
// the SIGBUS path and with 8 messages per packet. RadixUnderMultipleWriter (a ctest entry of
// its own): radix on 4 nodes with every segment under the multiple-writer protocol
// (SQUALL_TSM_PROTOCOL) prints the one-node checksum.
#include <gtest/gtest.h>

#include <string>

#include "run_command.hpp"

namespace {

using squall::test::run;

// The text after "checksum:" on the last line that has it ("" if none).
std::string checksum_of(const std::string& output) {
  const auto at = output.rfind("checksum:");
  if (at == std::string::npos) return "";
  const auto end = output.find('\n', at);
  return output.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

std::string run_on(const char* program, int nodes, const std::string& env = "") {
  const auto r = run(env + " " + SQUALLRUN + " -n " + std::to_string(nodes) + " " + program + " -p" +
                         std::to_string(nodes),
                     300);
  EXPECT_EQ(r.status, 0) << program << " on " << nodes << " nodes\n" << r.output;
  std::printf("%s n=%d: %.1f s, %s\n", program, nodes, r.seconds, checksum_of(r.output).c_str());
  return checksum_of(r.output);
}

void same_everywhere(const char* program) {
  const std::string one = run_on(program, 1);
  ASSERT_FALSE(one.empty()) << program << " printed no checksum";
  for (int n : {2, 4, 8}) EXPECT_EQ(run_on(program, n), one) << program << " on " << n << " nodes";
  EXPECT_EQ(run_on(program, 4, "SQUALL_FAULT_PATH=sigbus"), one) << program << " on the SIGBUS path";
  // Aggregated messages on more nodes than cores: a protocol answer left in a partly filled
  // packet hung the job.
  EXPECT_EQ(run_on(program, 4, "SQUALL_AGGREGATION=8"), one) << program << " with aggregation";
}

TEST(ParmacsApps, SorChecksumIsTheOneNodeChecksum) { same_everywhere(SOR); }
TEST(ParmacsApps, RadixChecksumIsTheOneNodeChecksum) { same_everywhere(RADIX); }
TEST(ParmacsApps, NbodyChecksumIsTheOneNodeChecksum) { same_everywhere(NBODY); }

// Radix is free of data races (its processes write disjoint words of shared pages between
// barriers and pauses), so release consistency gives it the same result.
// The statistics show that the protocol ran: its diffs went home.
TEST(ParmacsApps, RadixUnderMultipleWriter) {
  const std::string one = run_on(RADIX, 1);
  ASSERT_FALSE(one.empty()) << "radix printed no checksum";
  const auto r = run(std::string("SQUALL_TSM_PROTOCOL=multiple-writer SQUALL_STATS=1 ") + SQUALLRUN + " -n 4 " + RADIX + " -p4", 300);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(checksum_of(r.output), one) << r.output;
  EXPECT_NE(r.output.find("multiple_writer.diffs_applied"), std::string::npos) << r.output;
}

}  // namespace
