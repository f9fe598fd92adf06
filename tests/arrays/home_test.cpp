// SPDX-License-Identifier: BSD-3-Clause
// Home maps (squall/arrays/home.hpp): hash homes in range and spread, block homes in
// contiguous row-major blocks, user maps checked.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <squall/arrays/home.hpp>

namespace {

using namespace squall::arrays;

TEST(Home, HashHomeIsInRangeAndSpreads) {
  home_map map = hash_home();
  for (int nodes = 1; nodes <= 9; ++nodes) {
    std::vector<int> count(nodes, 0);
    for (int i = 0; i < 900; ++i) {
      int h = map.home_of(key_of(index1d{i}), nodes);
      ASSERT_GE(h, 0);
      ASSERT_LT(h, nodes);
      count[h]++;
    }
    for (int n = 0; n < nodes; ++n) EXPECT_GT(count[n], 900 / nodes / 2) << n << " of " << nodes;
  }
  EXPECT_EQ(home_map().home_of(key_of(std::string("doc")), 5), map.home_of(key_of(std::string("doc")), 5));
}

// A 2-D range walked row-major: the homes never go down, and each node holds a contiguous
// block whose size is count/nodes or one more, the larger blocks first.
void expect_blocks(index2d bounds, int nodes) {
  SCOPED_TRACE(testing::Message() << bounds[0] << "x" << bounds[1] << " on " << nodes << " nodes");
  home_map map = block_home(bounds);
  int count = bounds[0] * bounds[1];
  std::vector<int> size(nodes, 0);
  int previous = 0;
  for (int i = 0; i < bounds[0]; ++i)
    for (int j = 0; j < bounds[1]; ++j) {
      int h = map.home_of(key_of(index2d{i, j}), nodes);
      ASSERT_GE(h, previous);
      previous = h;
      size[h]++;
    }
  for (int n = 0; n < nodes; ++n) EXPECT_EQ(size[n], count / nodes + (n < count % nodes ? 1 : 0)) << "node " << n;
}

TEST(Home, BlockHomeCutsA2DRangeIntoContiguousBlocks) {
  expect_blocks({6, 5}, 4);  // 8 8 7 7
  expect_blocks({4, 4}, 4);  // one row each
  expect_blocks({16, 16}, 2);
  expect_blocks({3, 3}, 1);
  expect_blocks({2, 3}, 8);  // fewer elements than nodes: one each, then none
  EXPECT_EQ(block_home(index2d{4, 4}).home_of(key_of(index2d{1, 3}), 4), 1);
}

TEST(Home, BlockHomeInOtherDimensions) {
  home_map line = block_home(index1d{10});
  EXPECT_EQ(line.home_of(key_of(index1d{0}), 3), 0);
  EXPECT_EQ(line.home_of(key_of(index1d{3}), 3), 0);  // 4 3 3
  EXPECT_EQ(line.home_of(key_of(index1d{4}), 3), 1);
  EXPECT_EQ(line.home_of(key_of(index1d{9}), 3), 2);
  home_map cube = block_home(index6d{2, 2, 2, 2, 2, 2});
  EXPECT_EQ(cube.home_of(key_of(index6d{0, 1, 1, 1, 1, 1}), 2), 0);
  EXPECT_EQ(cube.home_of(key_of(index6d{1, 0, 0, 0, 0, 0}), 2), 1);
}

TEST(Home, BadBlocksAreUsageErrors) {
  EXPECT_THROW(block_home(index2d{0, 4}), squall::usage_error);
  EXPECT_THROW(block_home(index6d{1 << 20, 1 << 20, 1 << 20, 1 << 20, 1, 1}), squall::usage_error);
  home_map map = block_home(index2d{4, 4});
  EXPECT_THROW(map.home_of(key_of(index2d{4, 0}), 2), squall::usage_error);
  EXPECT_THROW(map.home_of(key_of(index2d{0, -1}), 2), squall::usage_error);
  EXPECT_THROW(map.home_of(key_of(index3d{0, 0, 0}), 2), squall::usage_error);  // another index type
  EXPECT_THROW(map.home_of(key_of(index2d{0, 0}), 0), squall::usage_error);
}

TEST(Home, UserHomeIsCalledAndChecked) {
  home_map by_length = user_home([](const key& k, int nodes) { return static_cast<int>(k.bytes().size()) % nodes; });
  EXPECT_EQ(by_length.home_of(key_of(std::string("abc")), 2), 1);
  EXPECT_EQ(by_length.home_of(key_of(std::string("abcd")), 2), 0);
  home_map wrong = user_home([](const key&, int nodes) { return nodes; });
  EXPECT_THROW(wrong.home_of(key_of(std::string("a")), 3), squall::usage_error);
  EXPECT_THROW(user_home(nullptr), squall::usage_error);
}

}  // namespace
