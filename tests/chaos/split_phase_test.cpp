// SPDX-License-Identifier: BSD-3-Clause
// Split-phase execution: begin, local work, end; two executions of different schedules
// outstanding at once (ended in either order); an execution ended by its destructor or moved.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <set>
#include <span>
#include <vector>

#include <squall/chaos/schedule.hpp>

#include "reference.hpp"

namespace chaos = squall::chaos;
using namespace chaos_test;

namespace {

using squall::chaos::index;  // not ::index from <strings.h>

constexpr index size = 2000;
constexpr std::size_t count = 2500;

using pattern = inspected;

pattern mixed(std::uint64_t seed, chaos::table_mode mode = chaos::table_mode::replicated) {
  return inspect_mixed(size, count, seed, mode, 64);
}

// scatter_op(add) of 1 from every ghost: each owned element ends as 1 + its number of remote referencers.
std::vector<std::int64_t> ones(const pattern& c) {
  return std::vector<std::int64_t>(static_cast<std::size_t>(c.s.ghost_end()), 1);
}

std::vector<std::int64_t> referencer_counts(const pattern& c, std::uint64_t seed) {
  std::vector<std::int64_t> want(c.d.owned_by(me()).size(), 1);
  for (int p = 0; p < nodes(); ++p) {
    if (p == me()) continue;
    const auto r = references(c.d, p, count, refs::mixed, seed);
    for (index g : std::set<index>(r.begin(), r.end())) {
      if (c.d.owner_of(g) == me()) ++want[static_cast<std::size_t>(c.d.offset_of(g))];
    }
  }
  return want;
}

testing::AssertionResult owned_equal(const std::vector<std::int64_t>& data, const std::vector<std::int64_t>& want) {
  return every(want.size(), [&](std::size_t k) { return describe(k, data[k], want[k]); });
}

TEST(SplitPhase, GatherWithLocalWorkBetween) {
  const auto c = mixed(71);
  auto data = owned_values(c.d, me(), c.s.ghost_end());
  auto e = chaos::gather_begin(c.s, std::span<std::int64_t>(data));
  std::vector<std::int64_t> work(100000);
  std::iota(work.begin(), work.end(), 0);
  const auto sum = std::accumulate(work.begin(), work.end(), std::int64_t{0});
  e.end();
  EXPECT_EQ(sum, std::int64_t{100000} * 99999 / 2);
  EXPECT_TRUE(reads_right_values(data, c.localized, c.original));
}

TEST(SplitPhase, TwoSchedulesOutstandingEndedInReverseOrder) {
  const auto a = mixed(72);
  const auto b = mixed(73, chaos::table_mode::distributed);
  auto x = owned_values(a.d, me(), a.s.ghost_end());
  auto y = ones(b);
  auto ea = chaos::gather_begin(a.s, std::span<std::int64_t>(x));
  auto eb = chaos::scatter_op_begin(b.s, std::span<std::int64_t>(y));
  eb.end();
  ea.end();
  EXPECT_TRUE(reads_right_values(x, a.localized, a.original));
  EXPECT_TRUE(owned_equal(y, referencer_counts(b, 73)));
}

TEST(SplitPhase, TwoSchedulesOutstandingEndedInOrder) {
  const auto a = mixed(74);
  const auto b = mixed(75);
  auto x = ones(a);
  auto y = owned_values(b.d, me(), b.s.ghost_end());
  auto ea = chaos::scatter_op_begin(a.s, std::span<std::int64_t>(x));
  auto eb = chaos::gather_begin(b.s, std::span<std::int64_t>(y));
  ea.end();
  eb.end();
  EXPECT_TRUE(owned_equal(x, referencer_counts(a, 74)));
  EXPECT_TRUE(reads_right_values(y, b.localized, b.original));
}

TEST(SplitPhase, OneScheduleTwoArraysOutstanding) {
  // Gathering two coordinate arrays over the same pattern at once, as the applications do.
  const auto c = mixed(76);
  auto x = owned_values(c.d, me(), c.s.ghost_end());
  auto y = owned_values(c.d, me(), c.s.ghost_end());
  auto ex = chaos::gather_begin(c.s, std::span<std::int64_t>(x));
  auto ey = chaos::gather_begin(c.s, std::span<std::int64_t>(y));
  ey.end();
  ex.end();
  EXPECT_TRUE(reads_right_values(x, c.localized, c.original));
  EXPECT_TRUE(reads_right_values(y, c.localized, c.original));
}

TEST(SplitPhase, ScatterBeginEnd) {
  const auto c = mixed(77);
  auto data = owned_values(c.d, me(), c.s.ghost_end());
  // Ghosts gathered, raised by 5 and written back over owners that were cleared: an element
  // ends as value + 5 when another node references it, else 0.
  chaos::gather(c.s, std::span<std::int64_t>(data));
  const auto mine = c.d.owned_by(me());
  for (std::size_t k = 0; k < data.size(); ++k) data[k] = k < mine.size() ? 0 : data[k] + 5;
  auto e = chaos::scatter_begin(c.s, std::span<std::int64_t>(data));
  e.end();
  const auto referencers = referencer_counts(c, 77);  // 1 + remote referencers
  EXPECT_TRUE(every(mine.size(), [&](std::size_t k) {
    return describe(k, data[k], referencers[k] > 1 ? value_of(mine[k]) + 5 : 0);
  }));
}

TEST(SplitPhase, DestructorEndsTheExecution) {
  const auto c = mixed(78);
  auto data = owned_values(c.d, me(), c.s.ghost_end());
  {
    auto e = chaos::gather_begin(c.s, std::span<std::int64_t>(data));
  }
  EXPECT_TRUE(reads_right_values(data, c.localized, c.original));
}

TEST(SplitPhase, MovedExecutionEndsOnce) {
  const auto c = mixed(79);
  auto data = ones(c);
  chaos::execution e;
  e = chaos::scatter_op_begin(c.s, std::span<std::int64_t>(data));
  chaos::execution moved(std::move(e));
  moved.end();
  EXPECT_TRUE(owned_equal(data, referencer_counts(c, 79)));
}

}  // namespace
