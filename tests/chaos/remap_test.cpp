// SPDX-License-Identifier: BSD-3-Clause
// Remap between distributions: a random distribution to another and back gives the original,
// one plan serves several arrays, remap to the block layout, one message per communicating
// pair, and owned_after against the sequential answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <squall/chaos/remap.hpp>

#include "reference.hpp"

namespace chaos = squall::chaos;
using namespace chaos_test;
using chaos::table_mode;

namespace {

using squall::chaos::index;  // not ::index from <strings.h>

constexpr index size = 3000;

std::vector<std::int64_t> values_in(const distribution& d) {
  std::vector<std::int64_t> v;
  for (index g : d.owned_by(me())) v.push_back(value_of(g));
  return v;
}

testing::AssertionResult laid_out_as(const std::vector<std::int64_t>& got, const distribution& d) {
  const auto want = values_in(d);
  if (got.size() != want.size()) {
    return testing::AssertionFailure() << got.size() << " elements, expected " << want.size();
  }
  return every(want.size(), [&](std::size_t k) { return describe(k, got[k], want[k]); });
}

class Remap : public testing::TestWithParam<table_mode> {
 protected:
  chaos::translation_table table_for(const distribution& d) const {
    return chaos::translation_table(d.owned_by(me()), d.size, GetParam(), 64);
  }
};

TEST_P(Remap, RoundTripGivesTheOriginal) {
  const auto a = random_distribution(size, nodes(), 101);
  const auto b = random_distribution(size, nodes(), 102, /*last_node_empty=*/true);
  const auto ta = table_for(a), tb = table_for(b);
  const chaos::remap_plan there(ta, tb), back(tb, ta);
  EXPECT_EQ(there.from_size(), ta.local_size());
  EXPECT_EQ(there.to_size(), tb.local_size());

  const auto original = values_in(a);
  const auto moved = there.apply(std::span<const std::int64_t>(original));
  EXPECT_TRUE(laid_out_as(moved, b));
  const auto returned = back.apply(std::span<const std::int64_t>(moved));
  EXPECT_EQ(returned, original);
}

struct vec3 {
  double x, y, z;
  bool operator==(const vec3&) const = default;
};

TEST_P(Remap, OnePlanSeveralArrays) {
  const auto a = random_distribution(size, nodes(), 103);
  const auto b = random_distribution(size, nodes(), 104);
  const auto ta = table_for(a), tb = table_for(b);
  const chaos::remap_plan plan(ta, tb);

  const auto ints = values_in(a);
  std::vector<vec3> vecs;
  std::vector<float> floats;
  for (index g : a.owned_by(me())) {
    vecs.push_back({static_cast<double>(g), -static_cast<double>(g), 0.5});
    floats.push_back(static_cast<float>(g) * 0.25f);
  }
  const auto ints_b = plan.apply(std::span<const std::int64_t>(ints));
  std::vector<vec3> vecs_b(static_cast<std::size_t>(plan.to_size()));
  plan.apply(std::span<const vec3>(vecs), std::span<vec3>(vecs_b));
  const auto floats_b = plan.apply(std::span<const float>(floats));

  EXPECT_TRUE(laid_out_as(ints_b, b));
  const auto mine_b = b.owned_by(me());
  ASSERT_EQ(vecs_b.size(), mine_b.size());
  ASSERT_EQ(floats_b.size(), mine_b.size());
  EXPECT_TRUE(every(mine_b.size(), [&](std::size_t k) -> std::string {
    const index g = mine_b[k];
    const auto x = static_cast<double>(g);
    if (vecs_b[k] == vec3{x, -x, 0.5} && floats_b[k] == static_cast<float>(g) * 0.25f) return {};
    return "[" + std::to_string(k) + "] element " + std::to_string(g) + " has vec3 x " + std::to_string(vecs_b[k].x) +
           ", float " + std::to_string(floats_b[k]);
  }));
}

TEST_P(Remap, ToBlockLayout) {
  const auto a = random_distribution(size, nodes(), 105);
  const auto ta = table_for(a);
  const auto tb = chaos::translation_table::block(size, GetParam());
  const chaos::remap_plan plan(ta, tb);
  const auto values = values_in(a);
  EXPECT_TRUE(laid_out_as(plan.apply(std::span<const std::int64_t>(values)), block_distribution(size, nodes())));
}

TEST_P(Remap, OneMessagePerCommunicatingPair) {
  const auto a = random_distribution(size, nodes(), 106);
  const auto b = random_distribution(size, nodes(), 107);
  const auto ta = table_for(a), tb = table_for(b);
  const chaos::remap_plan plan(ta, tb);
  std::set<int> peers;
  for (index g : a.owned_by(me())) {
    if (b.owner_of(g) != me()) peers.insert(b.owner_of(g));
  }
  const auto values = values_in(a);
  std::vector<std::int64_t> out(static_cast<std::size_t>(plan.to_size()));
  const auto messages = growth("chaos.messages", [&] {
    plan.apply(std::span<const std::int64_t>(values), std::span<std::int64_t>(out));
  });
  EXPECT_EQ(messages, peers.size());
  EXPECT_TRUE(laid_out_as(out, b));
}

TEST_P(Remap, SameDistributionMovesNothing) {
  const auto a = random_distribution(size, nodes(), 108);
  const auto ta = table_for(a), again = table_for(a);
  const chaos::remap_plan plan(ta, again);
  const auto values = values_in(a);
  std::vector<std::int64_t> out;
  const auto messages = growth("chaos.messages", [&] { out = plan.apply(std::span<const std::int64_t>(values)); });
  EXPECT_EQ(messages, 0u);
  EXPECT_EQ(out, values);
}

TEST_P(Remap, OwnedAfterANewOwnerPerElement) {
  const auto a = random_distribution(size, nodes(), 109);
  const auto ta = table_for(a);
  auto new_owner_of = [](index g) { return static_cast<int>((g * 40503 + 7) % 65537 % nodes()); };
  std::vector<int> new_owner;
  for (index g : a.owned_by(me())) new_owner.push_back(new_owner_of(g));
  const auto owned = chaos::owned_after(ta, new_owner);

  std::vector<index> want;
  for (index g = 0; g < size; ++g) {
    if (new_owner_of(g) == me()) want.push_back(g);
  }
  EXPECT_EQ(owned, want);

  // And the data follows.
  const chaos::translation_table tb(owned, size, GetParam(), 64);
  std::vector<std::vector<index>> lists(static_cast<std::size_t>(nodes()));
  for (index g = 0; g < size; ++g) lists[static_cast<std::size_t>(new_owner_of(g))].push_back(g);
  const chaos::remap_plan plan(ta, tb);
  const auto values = values_in(a);
  EXPECT_TRUE(laid_out_as(plan.apply(std::span<const std::int64_t>(values)), from_owned_lists(size, lists)));
}

INSTANTIATE_TEST_SUITE_P(Modes, Remap, testing::Values(table_mode::replicated, table_mode::distributed), mode_name);

}  // namespace
