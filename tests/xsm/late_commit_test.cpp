// SPDX-License-Identifier: BSD-3-Clause
// late-commit append (libxsm/PROTOCOLS.md): the shared list equals the sequential one (node
// order, append order), exact messages, bytes and fetches, and overflows as clear errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>
#include <squall/xsm/late_commit.hpp>
#include "usage_error_of.hpp"

namespace {

using namespace squall;

struct interaction {
  std::int32_t node, seq;
  double weight;
};
static_assert(sizeof(interaction) == 16);

constexpr std::size_t capacity = 10000;  // 160,000 bytes: 40 blocks of 4 KiB; 16 nodes append 9,192 items
constexpr std::size_t block = 4096;
constexpr std::size_t list_blocks = (capacity * sizeof(interaction) + block - 1) / block;

std::size_t count_of(int node, int round) { return static_cast<std::size_t>(100 + 61 * node + 17 * round); }

interaction item(int node, int seq, int round) { return {node, seq, node * 0.5 + seq + round * 1000.0}; }

// tsm's partition policy: contiguous ranges of ceil(blocks / nodes) blocks.
std::size_t home_begin(int h) {
  const std::size_t per = (list_blocks + static_cast<std::size_t>(nodes()) - 1) / static_cast<std::size_t>(nodes());
  return std::min(per * static_cast<std::size_t>(h), list_blocks) * block;
}
std::size_t home_end(int h) { return home_begin(h + 1); }

void expect_round(xsm::late_commit& list, int round) {
  for (int seq = 0; seq < static_cast<int>(count_of(node(), round)); ++seq) list.append(item(node(), seq, round));
  const std::uint64_t messages_before = list.messages.value(), bytes_before = list.bytes.value(),
                      fetches_before = list.fetches.value();
  const std::size_t total = list.commit();

  std::vector<interaction> expected;
  std::size_t my_first = 0;
  for (int p = 0; p < nodes(); ++p) {
    if (p == node()) my_first = expected.size();
    for (int seq = 0; seq < static_cast<int>(count_of(p, round)); ++seq) expected.push_back(item(p, seq, round));
  }
  ASSERT_EQ(total, expected.size());
  EXPECT_EQ(list.size(), expected.size());
  EXPECT_EQ(list.first_index(), my_first);
  EXPECT_EQ(list.pending(), 0u);
  const auto items = list.items<interaction>();
  for (std::size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(items[i].node, expected[i].node) << i;
    ASSERT_EQ(items[i].seq, expected[i].seq) << i;
    ASSERT_EQ(items[i].weight, expected[i].weight) << i;
  }
  // One message per other home whose blocks this node's items reach, exactly those bytes;
  // one fetch per block of the list (up to its size) homed elsewhere.
  const std::size_t begin = my_first * sizeof(interaction), end = begin + count_of(node(), round) * sizeof(interaction);
  std::uint64_t messages = 0, bytes = 0, fetches = 0;
  for (int h = 0; h < nodes(); ++h) {
    const std::size_t lo = std::max(begin, home_begin(h)), hi = std::min(end, home_end(h));
    if (h != node() && lo < hi) {
      ++messages;
      bytes += hi - lo;
    }
    for (std::size_t b = home_begin(h) / block; b < home_end(h) / block; ++b) {
      if (h != node() && b * block < total * sizeof(interaction)) ++fetches;
    }
  }
  EXPECT_EQ(list.messages.value() - messages_before, messages);
  EXPECT_EQ(list.bytes.value() - bytes_before, bytes);
  EXPECT_EQ(list.fetches.value() - fetches_before, fetches);
  tsm::barrier();  // every node has read the list before the next commit
}

TEST(LateCommit, ListInNodeOrderWithExactTraffic) {
  xsm::late_commit list(sizeof(interaction), capacity);
  expect_round(list, 0);
  expect_round(list, 1);  // a second commit replaces the list; copies were dropped
  EXPECT_EQ(list.commits.value(), 2u);
  EXPECT_EQ(list.items_copied.value(), count_of(node(), 0) + count_of(node(), 1));
}

TEST(LateCommit, EmptyCommitAndOverflowAreHandled) {
  xsm::late_commit list(sizeof(interaction), 64);
  EXPECT_EQ(list.commit(), 0u);
  // Too many for one node: refused at once.
  for (int i = 0; i < 64; ++i) list.append(item(node(), i, 0));
  EXPECT_THROW(list.append(item(node(), 64, 0)), usage_error);
  // Too many together (more than one node): refused by commit on every node, nothing copied.
  if (nodes() > 1) {
    try {
      list.commit();
      ADD_FAILURE() << "commit took " << 64 * nodes() << " items into a list of 64";
    } catch (const usage_error& e) {
      EXPECT_NE(std::string(e.what()).find("more than the list's 64"), std::string::npos) << e.what();
    }
    EXPECT_EQ(list.pending(), 64u);
    EXPECT_EQ(list.commits.value(), 1u);
  }
  EXPECT_THROW(list.append(std::int64_t{1}), usage_error);  // the wrong item size
  tsm::barrier();
}

TEST(LateCommit, BlockSizeZeroIsAUsageError) {
  const std::string what = squall::test::usage_error_of([] { xsm::late_commit list(8, 10, 0); });
  EXPECT_NE(what.find("late_commit: the block size must be a power of two"), std::string::npos) << what;
  tsm::barrier();
}

TEST(LateCommit, ItemSizesThatDifferBetweenNodesAreAnErrorOnEveryNode) {
  const std::size_t item_size = node() == 0 ? 8 : 16;  // one node alone differs on 1 node: none
  const std::string what = squall::test::usage_error_of([item_size] { xsm::late_commit list(item_size, 10); });
  if (nodes() > 1) {
    EXPECT_NE(what.find("late_commit: the item size differs between nodes (8 on some, 16 on others)"), std::string::npos)
        << what;
  } else {
    EXPECT_EQ(what, squall::test::no_usage_error);
  }
  tsm::barrier();
}

}  // namespace
