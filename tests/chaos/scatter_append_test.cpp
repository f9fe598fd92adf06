// SPDX-License-Identifier: BSD-3-Clause
// scatter_append: random items to random nodes (and to the owners of random elements through a
// table) arrive in source-node order, each source's items in the order sent, one message per
// communicating pair.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <squall/chaos/schedule.hpp>

#include "reference.hpp"

namespace chaos = squall::chaos;
using namespace chaos_test;

namespace {

using squall::chaos::index;  // not ::index from <strings.h>

struct item {
  std::int32_t source, seq;
  double weight;
  bool operator==(const item&) const = default;
};

std::ostream& operator<<(std::ostream& os, const item& i) { return os << "{" << i.source << ", " << i.seq << "}"; }

// Node p's items and their destinations: a random number of them (none on node 1).
struct sent {
  std::vector<item> items;
  std::vector<int> dest;
};
sent items_of(int p, std::uint64_t seed, std::size_t max_items) {
  rng r(seed * 31 + static_cast<std::uint64_t>(p));
  sent s;
  const std::size_t n = p == 1 ? 0 : r.below(max_items + 1);
  for (std::size_t i = 0; i < n; ++i) {
    s.items.push_back({p, static_cast<std::int32_t>(i), 0.5 * static_cast<double>(i)});
    s.dest.push_back(static_cast<int>(r.below(static_cast<std::uint64_t>(nodes()))));
  }
  return s;
}

TEST(ScatterAppend, RandomItemsToRandomNodes) {
  const auto mine = items_of(me(), 91, 3000);
  std::vector<item> arrived;
  const auto messages = growth("chaos.messages", [&] {
    arrived = chaos::scatter_append(std::span<const item>(mine.items), std::span<const int>(mine.dest));
  });

  std::vector<item> want;
  for (int p = 0; p < nodes(); ++p) {
    const auto s = items_of(p, 91, 3000);
    for (std::size_t i = 0; i < s.items.size(); ++i) {
      if (s.dest[i] == me()) want.push_back(s.items[i]);
    }
  }
  EXPECT_EQ(arrived, want);

  std::set<int> peers(mine.dest.begin(), mine.dest.end());
  peers.erase(me());
  EXPECT_EQ(messages, peers.size()) << "one message per node sent to";
}

TEST(ScatterAppend, SplitPhaseOverlapsTwoAppends) {
  // Two appends in flight at once (begun in order, ended in the opposite order) each deliver
  // exactly their own items.
  const auto first = items_of(me(), 92, 500), second = items_of(me(), 93, 500);
  auto a = chaos::scatter_append_begin(std::span<const item>(first.items), std::span<const int>(first.dest));
  auto b = chaos::scatter_append_begin(std::span<const item>(second.items), std::span<const int>(second.dest));
  const auto arrived_second = b.end();
  const auto arrived_first = a.end();
  for (auto [seed, arrived] : {std::pair{92, &arrived_first}, std::pair{93, &arrived_second}}) {
    std::vector<item> want;
    for (int p = 0; p < nodes(); ++p) {
      const auto s = items_of(p, static_cast<std::uint64_t>(seed), 500);
      for (std::size_t i = 0; i < s.items.size(); ++i) {
        if (s.dest[i] == me()) want.push_back(s.items[i]);
      }
    }
    EXPECT_EQ(*arrived, want) << "seed " << seed;
  }
}

TEST(ScatterAppend, ManyItemsToOneNode) {
  // 240 KB from every node to node 0: more than one message can carry.
  std::vector<item> items;
  for (int i = 0; i < 10000; ++i) items.push_back({me(), i, 1.0});
  const std::vector<int> dest(items.size(), 0);
  const auto arrived = chaos::scatter_append(std::span<const item>(items), std::span<const int>(dest));
  std::vector<item> want;
  if (me() == 0) {
    for (int p = 0; p < nodes(); ++p) {
      for (int i = 0; i < 10000; ++i) want.push_back({p, i, 1.0});
    }
  }
  EXPECT_EQ(arrived.size(), want.size());
  EXPECT_TRUE(arrived == want);
}

class ScatterAppendToOwners : public testing::TestWithParam<chaos::table_mode> {};

TEST_P(ScatterAppendToOwners, ItemsReachTheOwnersOfTheirElements) {
  const auto d = random_distribution(2000, nodes(), 92);
  const chaos::translation_table t(d.owned_by(me()), d.size, GetParam(), 64);
  auto items_for = [&](int p) {
    std::vector<item> items;
    std::vector<index> dest;
    rng r(93 + static_cast<std::uint64_t>(p));
    for (int i = 0; i < 1500; ++i) {
      items.push_back({p, i, 0});
      dest.push_back(static_cast<index>(r.below(static_cast<std::uint64_t>(d.size))));
    }
    return std::pair{items, dest};
  };
  const auto [items, dest] = items_for(me());
  const auto arrived = chaos::scatter_append(t, std::span<const item>(items), std::span<const index>(dest));

  std::vector<item> want;
  for (int p = 0; p < nodes(); ++p) {
    const auto [pi, pd] = items_for(p);
    for (std::size_t i = 0; i < pi.size(); ++i) {
      if (d.owner_of(pd[i]) == me()) want.push_back(pi[i]);
    }
  }
  EXPECT_EQ(arrived.size(), want.size());
  EXPECT_TRUE(arrived == want);
}

INSTANTIATE_TEST_SUITE_P(Modes, ScatterAppendToOwners,
                         testing::Values(chaos::table_mode::replicated, chaos::table_mode::distributed), mode_name);

}  // namespace
