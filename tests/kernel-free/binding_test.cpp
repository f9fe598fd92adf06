// SPDX-License-Identifier: BSD-3-Clause
// SQUALL_BIND: each node of a job binds itself to its share of the launcher's processors
// when there are at least as many processors as nodes on the host, and not otherwise.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <squall/squall.hpp>

namespace {

using cpu_bits = std::uint64_t;  // processors 0-63; the test skips larger machines

// The processors squallrun may use: it is this process's parent.
cpu_bits launcher_cpus() {
  std::ifstream status("/proc/" + std::to_string(getppid()) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Cpus_allowed_list:", 0) != 0) continue;
    cpu_bits bits = 0;
    std::stringstream list(line.substr(line.find(':') + 1));
    for (std::string range; std::getline(list, range, ',');) {
      const auto dash = range.find('-');
      const int first = std::stoi(range), last = dash == std::string::npos ? first : std::stoi(range.substr(dash + 1));
      for (int c = first; c <= last && c < 64; ++c) bits |= cpu_bits{1} << c;
    }
    return bits;
  }
  return 0;
}

cpu_bits my_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  cpu_bits bits = 0;
  for (int c = 0; c < 64; ++c) {
    if (CPU_ISSET(c, &set)) bits |= cpu_bits{1} << c;
  }
  return bits;
}

struct bit_or {
  cpu_bits operator()(cpu_bits a, cpu_bits b) const { return a | b; }
};

TEST(Binding, NodesGetDisjointSharesOnlyWhenEachCanHaveOne) {
  const cpu_bits launcher = launcher_cpus();
  if (launcher == 0 || std::getenv("SQUALL_JOB_FD") == nullptr) GTEST_SKIP() << "not started by squallrun";
  if (sysconf(_SC_NPROCESSORS_CONF) > 64) GTEST_SKIP() << "more than 64 processors";
  const int n = squall::nodes(), cpus = __builtin_popcountll(launcher);
  const char* setting = std::getenv("SQUALL_BIND");
  const bool bound = setting != nullptr ? std::string(setting) == "1" : n >= 2 && n <= cpus;

  const cpu_bits mine = my_cpus();
  const cpu_bits all = squall::allreduce(mine, bit_or{});
  const int counted = squall::allreduce(__builtin_popcountll(mine));
  EXPECT_NE(mine, 0u);
  EXPECT_EQ(mine & ~launcher, 0u) << "a processor the launcher does not have";
  if (bound && n <= cpus) {
    EXPECT_EQ(counted, __builtin_popcountll(all)) << "the nodes' shares overlap";
    EXPECT_EQ(all, launcher) << "processors left to no node";
    EXPECT_GE(__builtin_popcountll(mine), cpus / n);
    EXPECT_LE(__builtin_popcountll(mine), (cpus + n - 1) / n);
  } else if (!bound) {
    EXPECT_EQ(mine, launcher);
  }
  // A thread started after init shares the node's processors.
  cpu_bits in_thread = 0;
  std::thread([&] { in_thread = my_cpus(); }).join();
  EXPECT_EQ(in_thread, mine);
}

}  // namespace
