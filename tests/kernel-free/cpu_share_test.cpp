// SPDX-License-Identifier: BSD-3-Clause
// Which processors node i of n gets (runtime/binding.hpp), on hwloc's synthetic topologies:
// whole cores, hyperthreads of a core together, shares of one package where the nodes
// divide the packages, and on a flat host the same as the equal slices of the processor
// list that came before.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/binding.hpp"

namespace {

using squall::rt::cpu_list;
using squall::rt::cpu_share;
using squall::rt::topology_ptr;

topology_ptr synthetic(const char* description) {
  hwloc_topology_t t = nullptr;
  EXPECT_EQ(hwloc_topology_init(&t), 0);
  topology_ptr topology(t);
  EXPECT_EQ(hwloc_topology_set_synthetic(t, description), 0) << description;
  EXPECT_EQ(hwloc_topology_load(t), 0);
  return topology;
}

// Every node's share of the whole machine, as processor lists.
std::vector<std::string> shares(const char* description, int nodes, const char* usable = nullptr) {
  const topology_ptr topology = synthetic(description);
  squall::rt::cpu_set_ptr set(hwloc_bitmap_dup(hwloc_topology_get_allowed_cpuset(topology.get())));
  if (usable != nullptr) hwloc_bitmap_list_sscanf(set.get(), usable);
  std::vector<std::string> out;
  for (int i = 0; i < nodes; ++i) out.push_back(cpu_list(cpu_share(topology.get(), set.get(), i, nodes).get()));
  return out;
}

using lists = std::vector<std::string>;

TEST(CpuShare, FlatHostGetsEqualSlicesOfTheProcessorList) {
  EXPECT_EQ(shares("core:2 pu:1", 2), (lists{"0", "1"}));
  EXPECT_EQ(shares("core:2 pu:1", 3), (lists{"0", "1", "0"}));  // more nodes than processors
  EXPECT_EQ(shares("core:2 pu:1", 1), (lists{"0-1"}));
  EXPECT_EQ(shares("core:8 pu:1", 3), (lists{"0-1", "2-4", "5-7"}));
  EXPECT_EQ(shares("core:8 pu:1", 2, "2-5"), (lists{"2-3", "4-5"}));
}

TEST(CpuShare, HyperthreadsOfACoreStayTogether) {
  EXPECT_EQ(shares("core:2 pu:2", 2), (lists{"0-1", "2-3"}));
  EXPECT_EQ(shares("package:2 core:2 pu:2", 4), (lists{"0-1", "2-3", "4-5", "6-7"}));
  EXPECT_EQ(shares("package:2 core:2 pu:2", 3), (lists{"0-1", "2-3", "4-7"}));
}

TEST(CpuShare, NodesDividingThePackagesGetOnePackageEach) {
  EXPECT_EQ(shares("package:2 core:2 pu:2", 2), (lists{"0-3", "4-7"}));
  EXPECT_EQ(shares("package:2 numa:1 core:4 pu:2", 4), (lists{"0-3", "4-7", "8-11", "12-15"}));
}

TEST(CpuShare, MoreNodesThanCoresSpreadOverCoresBeforeSharingOne) {
  // One processor each: every core's first before any core's second.
  EXPECT_EQ(shares("core:2 pu:2", 3), (lists{"0", "2", "1"}));
  EXPECT_EQ(shares("core:2 pu:2", 5), (lists{"0", "2", "1", "3", "0"}));
}

TEST(CpuShare, OnlyUsableProcessorsAreHandedOut) {
  // Core 0 is half usable: its one usable processor counts as the core.
  EXPECT_EQ(shares("core:4 pu:2", 2, "1-7"), (lists{"1-3", "4-7"}));
  EXPECT_EQ(shares("core:4 pu:2", 2, ""), (lists{"", ""}));
}

}  // namespace
