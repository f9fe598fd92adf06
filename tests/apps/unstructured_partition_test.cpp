// SPDX-License-Identifier: BSD-3-Clause
// The parallel versions' division of the unstructured mesh: renamings and the edge/face rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "squall/apps/unstructured/mesh_generator.hpp"
#include "squall/apps/unstructured/partition.hpp"

namespace squall::apps::unstructured {
namespace {

const Mesh& small_mesh() {
  static const Mesh mesh = generate_mesh(shape_for_nodes(2000), 1);
  return mesh;
}

// Every old name maps into its part's range below the padding, and no two share a name.
void expect_valid(const Renaming& r, std::size_t nodes) {
  ASSERT_EQ(r.name.size(), nodes);
  std::vector<char> used(r.length(), 0);
  for (NodeId name : r.name) {
    ASSERT_LT(name, r.length());
    const std::size_t p = r.part_of(name);
    EXPECT_LT(name, r.first[p] + r.count[p]);
    EXPECT_FALSE(used[name]);
    used[name] = 1;
  }
}

// Edges whose ends fall in the same run of `run` names (spatial locality of a numbering).
std::size_t edges_within_runs(const Mesh& mesh, const Renaming& r, std::size_t run) {
  std::size_t within = 0;
  for (const Edge& e : mesh.edges) within += r.name[e.a] / run == r.name[e.b] / run;
  return within;
}

TEST(UnstructuredPartition, BlockRenamingIsTheIdentityInBlocks) {
  const Renaming r = block_renaming(10, 4);
  expect_valid(r, 10);
  EXPECT_EQ(r.first, (std::vector<std::size_t>{0, 3, 6, 9, 10}));
  EXPECT_EQ(r.part_of(8), 2u);
}

TEST(UnstructuredPartition, RcbPartsAreBalancedAndCutFarFewerEdgesThanBlocks) {
  const Mesh& mesh = small_mesh();
  for (std::size_t parts : {1, 2, 3, 4}) {
    const Renaming r = rcb_renaming(mesh.coords, {parts, 0, 1});
    expect_valid(r, mesh.node_count());
    const auto [low, high] = std::minmax_element(r.count.begin(), r.count.end());
    EXPECT_LE(*high - *low, 1u) << parts << " parts";
  }
  const Renaming rcb = rcb_renaming(mesh.coords, {4, 0, 1});
  const double block_cut = cut_edges_percent(mesh.edges, block_renaming(mesh.node_count(), 4));
  EXPECT_GT(block_cut, 70.0);
  EXPECT_LT(cut_edges_percent(renamed_mesh(mesh, rcb).edges, rcb), block_cut / 3);
}

TEST(UnstructuredPartition, SecondLevelRcbGroupsNeighboursIntoRuns) {
  const Mesh& mesh = small_mesh();
  const Renaming level1 = rcb_renaming(mesh.coords, {4, 0, 1});
  const Renaming level2 = rcb_renaming(mesh.coords, {4, 102, 1});
  expect_valid(level2, mesh.node_count());
  EXPECT_EQ(level1.count, level2.count);  // the same parts, reordered inside
  EXPECT_GT(edges_within_runs(mesh, level2, 102), 2 * edges_within_runs(mesh, level1, 102));
}

TEST(UnstructuredPartition, PaddingAlignsEveryPart) {
  const Mesh& mesh = small_mesh();
  const Renaming r = rcb_renaming(mesh.coords, {3, 102, 512});
  expect_valid(r, mesh.node_count());
  for (std::size_t p = 0; p <= 3; ++p) EXPECT_EQ(r.first[p] % 512, 0u);
  EXPECT_EQ(renamed_mesh(mesh, r).coords.size(), r.length());
}

TEST(UnstructuredPartition, PaddedGroupsKeepThePartsAndGiveEachGroupBlocksOfItsOwn) {
  const Mesh& mesh = small_mesh();
  const Renaming level2 = rcb_renaming(mesh.coords, {3, 102, 512});
  // Three groups by the old name's residue, so that every part has all three.
  std::vector<std::uint32_t> group(level2.length(), 0);
  for (std::size_t old = 0; old < mesh.node_count(); ++old) group[level2.name[old]] = static_cast<std::uint32_t>(old % 3);
  const GroupLayout layout{.block_bytes = 4096, .name_bytes = 40, .align = 512};
  const Renaming r = padded_groups(level2, group, layout);
  expect_valid(r, mesh.node_count());
  for (std::size_t p = 0; p <= 3; ++p) EXPECT_EQ(r.first[p] % 512, 0u);
  std::vector<std::int64_t> group_of_block(r.length() * 40 / 4096 + 1, -1);
  for (std::size_t old = 0; old < mesh.node_count(); ++old) {
    EXPECT_EQ(r.part_of(r.name[old]), level2.part_of(level2.name[old]));  // the same parts
    // Every block a name's bytes touch holds that name's group only.
    for (std::size_t b = r.name[old] * 40 / 4096; b <= (r.name[old] * 40 + 39) / 4096; ++b) {
      const auto g = static_cast<std::int64_t>(old % 3);
      EXPECT_TRUE(group_of_block[b] == -1 || group_of_block[b] == g) << "block " << b;
      group_of_block[b] = g;
    }
  }
  // Inside a part's group, level 2's order.
  std::vector<std::size_t> by_level2(level2.length(), mesh.node_count());
  for (std::size_t old = 0; old < mesh.node_count(); ++old) by_level2[level2.name[old]] = old;
  std::vector<std::int64_t> last(3 * level2.parts(), -1);
  for (std::size_t k = 0; k < level2.length(); ++k) {
    const std::size_t old = by_level2[k];
    if (old == mesh.node_count()) continue;  // padding
    std::int64_t& before = last[level2.part_of(static_cast<NodeId>(k)) * 3 + old % 3];
    EXPECT_GT(static_cast<std::int64_t>(r.name[old]), before);
    before = r.name[old];
  }
  EXPECT_THROW(padded_groups(level2, std::vector<std::uint32_t>(3, 0), layout), std::invalid_argument);
}

TEST(UnstructuredPartition, ItemsGoToTheirPartOrTheLessLoadedOfTheirEnds) {
  const Mesh& mesh = small_mesh();
  const Renaming r = rcb_renaming(mesh.coords, {4, 0, 1});
  const Mesh renamed = renamed_mesh(mesh, r);
  const std::vector<std::uint32_t> part = assign_edges(renamed.edges, r);
  std::vector<std::size_t> load(4, 0);
  for (std::size_t e = 0; e < part.size(); ++e) {
    const std::size_t pa = r.part_of(renamed.edges[e].a), pb = r.part_of(renamed.edges[e].b);
    EXPECT_TRUE(part[e] == pa || part[e] == pb);
    ++load[part[e]];
  }
  const auto [low, high] = std::minmax_element(load.begin(), load.end());
  EXPECT_LT(static_cast<double>(*high), 1.2 * static_cast<double>(*low));
  const std::vector<std::uint32_t> faces = assign_faces(renamed.faces, r);
  for (std::size_t f = 0; f < faces.size(); ++f) {
    const auto& nodes = renamed.faces[f].nodes;
    EXPECT_TRUE(std::any_of(nodes.begin(), nodes.end(), [&](NodeId n) { return r.part_of(n) == faces[f]; }));
  }
}

}  // namespace
}  // namespace squall::apps::unstructured
