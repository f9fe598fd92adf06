// SPDX-License-Identifier: BSD-3-Clause
// The MPI version of unstructured partitions the mesh without the Squall runtime
// (serial_partition); the Squall versions with chaos::rcb and chaos's almost-owner-computes
// (partition_mesh). "The same partition" is checked here, node by node, edge by edge and face
// by face, on the small mesh; and the shared arrays' renaming against its promise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <squall/squall.hpp>

#include "squall/apps/unstructured/block_renaming.hpp"
#include "squall/apps/unstructured/mesh_generator.hpp"
#include "squall/apps/unstructured/mesh_partition.hpp"
#include "squall/apps/unstructured/serial_partition.hpp"

namespace {

using namespace squall::apps::unstructured;

std::vector<std::int64_t> positions_of(const std::vector<std::int32_t>& owner, int me) {
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < owner.size(); ++i) {
    if (owner[i] == me) out.push_back(static_cast<std::int64_t>(i));
  }
  return out;
}

TEST(UnstructuredPartition, SerialPartitionIsChaosPartition) {
  const Mesh mesh = generate_mesh(shape_for_nodes(2000), 1);
  const int me = squall::node();
  const MeshPartition part = partition_mesh(mesh);
  const SerialPartition serial = serial_partition(mesh, squall::nodes());

  const std::vector<std::int64_t> owned(part.table.owned().begin(), part.table.owned().end());
  EXPECT_EQ(positions_of(serial.node_owner, me), owned);
  EXPECT_EQ(positions_of(serial.edge_owner, me), part.edges);
  EXPECT_EQ(positions_of(serial.face_owner, me), part.faces);
  EXPECT_DOUBLE_EQ(serial.cut_edges_pct, part.cut_edges_pct);
}

TEST(UnstructuredPartition, RenamingGivesEachNodeWholeBlocks) {
  const Mesh mesh = generate_mesh(shape_for_nodes(2000), 1);
  const int me = squall::node();
  const MeshPartition part = partition_mesh(mesh);
  constexpr std::size_t kBlock = 4096;
  const BlockRenaming names(part.table, kBlock);
  constexpr std::int64_t kRun = kBlock / sizeof(double);
  EXPECT_EQ(names.first(me) % kRun, 0);
  EXPECT_EQ(names.length() % kRun, 0);
  std::vector<std::int64_t> elements;
  for (std::int64_t g : part.table.owned()) elements.push_back(names.element_of(static_cast<NodeId>(g)));
  std::vector<std::int64_t> expected(elements.size());
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = names.first(me) + static_cast<std::int64_t>(i);
  EXPECT_EQ(elements, expected);  // the owned nodes, in order, from the node's first element
  EXPECT_LE(names.first(me) + static_cast<std::int64_t>(elements.size()), names.first(me + 1));
}

}  // namespace
