// SPDX-License-Identifier: BSD-3-Clause
// The inspector against the sequential truth, with tables in both modes: localized indirection
// arrays read the referenced values after a gather, each off-node element is fetched once
// (however often and in however many arrays it is referenced), local-only and all-remote
// patterns, incremental inspection and merging.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <squall/chaos/schedule.hpp>

#include "reference.hpp"

namespace chaos = squall::chaos;
using namespace chaos_test;
using chaos::table_mode;

namespace {

using squall::chaos::index;  // not ::index from <strings.h>

constexpr index size = 2000;
constexpr std::size_t count = 3000;  // references per node: many repeats

class Inspector : public testing::TestWithParam<table_mode> {
 protected:
  chaos::translation_table table_for(const distribution& d) const {
    return chaos::translation_table(d.owned_by(me()), d.size, GetParam(), 64);
  }
};

// Owned references become their offsets, off-node ones ghost slots of this schedule, one slot
// per distinct element.
testing::AssertionResult localized_as_documented(const distribution& d, const chaos::schedule& s,
                                                 std::span<const index> localized, std::span<const index> original) {
  std::map<index, index> slot_of;  // global -> ghost slot
  std::set<index> slots;
  auto result = every(original.size(), [&](std::size_t i) -> std::string {
    const index g = original[i], got = localized[i];
    if (d.owner_of(g) == me()) return describe(i, got, d.offset_of(g));
    if (got < s.ghost_begin() || got >= s.ghost_end()) {
      return "[" + std::to_string(i) + "] off-node element " + std::to_string(g) + " at " + std::to_string(got) +
             ", outside the ghost slots [" + std::to_string(s.ghost_begin()) + ", " + std::to_string(s.ghost_end()) +
             ")";
    }
    auto [it, fresh] = slot_of.emplace(g, got);
    if (!fresh && it->second != got) {
      return "element " + std::to_string(g) + " in two ghost slots, " + std::to_string(it->second) + " and " +
             std::to_string(got);
    }
    if (fresh && !slots.insert(got).second) return "ghost slot " + std::to_string(got) + " holds two elements";
    return {};
  });
  return result;
}

TEST_P(Inspector, LocalizedReferencesReadTheirValues) {
  const auto d = random_distribution(size, nodes(), 31);
  const auto t = table_for(d);
  const auto original = references(d, me(), count, refs::mixed, 31);
  auto localized = original;
  const auto s = chaos::inspect(t, {std::span<index>(localized)});

  EXPECT_EQ(s.local_size(), t.local_size());
  EXPECT_EQ(s.ghost_begin(), t.local_size());
  EXPECT_EQ(s.ghosts(), static_cast<index>(off_node(d, me(), {original}).size())) << "each off-node element once";
  EXPECT_TRUE(localized_as_documented(d, s, localized, original));
  const auto truth = gather_truth(d, me(), [&](int p) { return references(d, p, count, refs::mixed, 31); });
  EXPECT_TRUE(figures_match(s.figures(), truth));

  auto data = owned_values(d, me(), s.ghost_end());
  chaos::gather(s, std::span<std::int64_t>(data));
  EXPECT_TRUE(reads_right_values(data, localized, original));
}

TEST_P(Inspector, LocalOnlyReferencesNeedNoGhostsAndNoMessages) {
  const auto d = random_distribution(size, nodes(), 32);
  const auto t = table_for(d);
  const auto original = references(d, me(), count, refs::local_only, 32);
  auto localized = original;
  chaos::schedule s;
  const auto inspect_messages = growth("chaos.messages", [&] { s = chaos::inspect(t, {std::span<index>(localized)}); });
  EXPECT_EQ(s.ghosts(), 0);
  EXPECT_TRUE(localized_as_documented(d, s, localized, original));
  EXPECT_TRUE(figures_match(s.figures(), movement{}));
  // A replicated table answers every lookup locally: nothing to ask anyone.
  if (GetParam() == table_mode::replicated) {
EXPECT_EQ(inspect_messages, 0u);
}

  auto data = owned_values(d, me(), s.ghost_end());
  const auto gather_messages = growth("chaos.messages", [&] { chaos::gather(s, std::span<std::int64_t>(data)); });
  EXPECT_EQ(gather_messages, 0u);
  EXPECT_TRUE(reads_right_values(data, localized, original));
}

TEST_P(Inspector, AllRemoteReferences) {
  const auto d = random_distribution(size, nodes(), 33);
  const auto t = table_for(d);
  const auto original = references(d, me(), count, refs::all_remote, 33);
  auto localized = original;
  const auto s = chaos::inspect(t, {std::span<index>(localized)});
  EXPECT_EQ(s.ghosts(), static_cast<index>(off_node(d, me(), {original}).size()));
  EXPECT_TRUE(localized_as_documented(d, s, localized, original));
  auto data = owned_values(d, me(), s.ghost_end());
  chaos::gather(s, std::span<std::int64_t>(data));
  EXPECT_TRUE(reads_right_values(data, localized, original));
}

TEST_P(Inspector, NodeOwningNothing) {
  const auto d = random_distribution(size, nodes(), 34, /*last_node_empty=*/true);
  const auto t = table_for(d);
  const auto original = references(d, me(), count, refs::mixed, 34);
  auto localized = original;
  const auto s = chaos::inspect(t, {std::span<index>(localized)});
  EXPECT_TRUE(localized_as_documented(d, s, localized, original));
  auto data = owned_values(d, me(), s.ghost_end());
  chaos::gather(s, std::span<std::int64_t>(data));
  EXPECT_TRUE(reads_right_values(data, localized, original));
}

TEST_P(Inspector, NodeWithNothingToDo) {
  // The last node owns nothing and references nothing: its data arrays are empty.
  const auto d = random_distribution(size, nodes(), 44, /*last_node_empty=*/true);
  const auto t = table_for(d);
  const bool idle = nodes() > 1 && me() == nodes() - 1;
  const auto original = idle ? std::vector<index>{} : references(d, me(), count, refs::mixed, 44);
  auto localized = original;
  const auto s = chaos::inspect(t, {std::span<index>(localized)});
  if (idle) {
    EXPECT_EQ(s.ghost_end(), 0);
  }
  auto data = owned_values(d, me(), s.ghost_end());
  chaos::gather(s, std::span<std::int64_t>(data));
  EXPECT_TRUE(reads_right_values(data, localized, original));
  chaos::scatter_op(s, std::span<std::int64_t>(data));
  chaos::scatter(s, std::span<std::int64_t>(data));
}

TEST_P(Inspector, SomeNodesReferenceNothing) {
  const auto d = random_distribution(size, nodes(), 35);
  const auto t = table_for(d);
  const auto original = me() % 2 == 1 ? std::vector<index>{} : references(d, me(), count, refs::mixed, 35);
  auto localized = original;
  const auto s = chaos::inspect(t, {std::span<index>(localized)});
  EXPECT_EQ(s.ghosts(), static_cast<index>(off_node(d, me(), {original}).size()));
  auto data = owned_values(d, me(), s.ghost_end());
  chaos::gather(s, std::span<std::int64_t>(data));
  EXPECT_TRUE(reads_right_values(data, localized, original));
  // The odd nodes still send their elements to the even ones.
  EXPECT_TRUE(figures_match(s.figures(), gather_truth(d, me(), [&](int p) {
    return p % 2 == 1 ? std::vector<index>{} : references(d, p, count, refs::mixed, 35);
  })));
}

TEST_P(Inspector, SeveralArraysShareGhosts) {
  // The two ends of random edges: the same element often appears in both arrays.
  const auto d = random_distribution(size, nodes(), 36);
  const auto t = table_for(d);
  const auto from = references(d, me(), count, refs::mixed, 36);
  const auto to = references(d, me(), count, refs::mixed, 37);
  auto lfrom = from, lto = to;
  const auto s = chaos::inspect(t, {std::span<index>(lfrom), std::span<index>(lto)});
  EXPECT_EQ(s.ghosts(), static_cast<index>(off_node(d, me(), {from, to}).size()));

  std::vector<index> both = from, lboth = lfrom;
  both.insert(both.end(), to.begin(), to.end());
  lboth.insert(lboth.end(), lto.begin(), lto.end());
  EXPECT_TRUE(localized_as_documented(d, s, lboth, both)) << "one slot per element across both arrays";

  auto data = owned_values(d, me(), s.ghost_end());
  chaos::gather(s, std::span<std::int64_t>(data));
  EXPECT_TRUE(reads_right_values(data, lfrom, from));
  EXPECT_TRUE(reads_right_values(data, lto, to));
}

// Two overlapping patterns inspected one after the other.
struct incremental_case {
  distribution d;
  chaos::translation_table t;
  std::vector<index> a, b, la, lb;
  chaos::schedule first, second;
};

incremental_case incremental(table_mode mode, std::uint64_t seed) {
  auto d = random_distribution(size, nodes(), seed);
  auto t = chaos::translation_table(d.owned_by(me()), d.size, mode, 64);
  auto a = references(d, me(), 1500, refs::mixed, seed);
  auto b = references(d, me(), 1500, refs::mixed, seed + 1);
  auto la = a, lb = b;
  auto first = chaos::inspect(t, {std::span<index>(la)});
  auto second = chaos::inspect(t, first, {std::span<index>(lb)});
  return {std::move(d), std::move(t), std::move(a), std::move(b), std::move(la), std::move(lb), std::move(first),
          std::move(second)};
}

TEST_P(Inspector, IncrementalFetchesOnlyNewElements) {
  auto c = incremental(GetParam(), 38);
  const auto old_ghosts = off_node(c.d, me(), {c.a});
  const std::set<index> old_set(old_ghosts.begin(), old_ghosts.end());
  std::size_t fresh = 0;
  for (index g : off_node(c.d, me(), {c.b})) fresh += old_set.count(g) == 0;

  EXPECT_EQ(c.second.local_size(), c.t.local_size());
  EXPECT_EQ(c.second.ghost_begin(), c.first.ghost_end());
  EXPECT_EQ(c.second.ghosts(), static_cast<index>(fresh));
  EXPECT_EQ(c.second.figures().elements_received, static_cast<index>(fresh));

  // Elements the first schedule fetches keep its slots; new ones get the second's.
  std::map<index, index> earlier;
  for (std::size_t i = 0; i < c.a.size(); ++i) earlier[c.a[i]] = c.la[i];
  EXPECT_TRUE(every(c.b.size(), [&](std::size_t i) -> std::string {
    const index g = c.b[i], got = c.lb[i];
    if (c.d.owner_of(g) == me()) return describe(i, got, c.d.offset_of(g));
    if (old_set.count(g)) return describe(i, got, earlier[g]);
    if (got >= c.second.ghost_begin() && got < c.second.ghost_end()) return {};
    return "new element " + std::to_string(g) + " at " + std::to_string(got) + ", outside the second schedule's slots";
  }));
}

TEST_P(Inspector, IncrementalGathersFillEverything) {
  auto c = incremental(GetParam(), 40);
  auto data = owned_values(c.d, me(), c.second.ghost_end());

  // The second alone fills its own slots and leaves the first's.
  chaos::gather(c.second, std::span<std::int64_t>(data));
  EXPECT_TRUE(every(static_cast<std::size_t>(c.first.ghosts()), [&](std::size_t k) {
    const auto slot = static_cast<std::size_t>(c.first.ghost_begin()) + k;
    return describe(slot, data[slot], -1);
  })) << "slots of the first schedule";
  std::vector<index> only_new, only_new_local;
  const auto old_ghosts = off_node(c.d, me(), {c.a});
  const std::set<index> old_set(old_ghosts.begin(), old_ghosts.end());
  for (std::size_t i = 0; i < c.b.size(); ++i) {
    if (!old_set.count(c.b[i])) {
      only_new.push_back(c.b[i]);
      only_new_local.push_back(c.lb[i]);
    }
  }
  EXPECT_TRUE(reads_right_values(data, only_new_local, only_new));

  chaos::gather(c.first, std::span<std::int64_t>(data));
  EXPECT_TRUE(reads_right_values(data, c.la, c.a));
  EXPECT_TRUE(reads_right_values(data, c.lb, c.b));
}

TEST_P(Inspector, MergedScheduleMovesBoth) {
  auto c = incremental(GetParam(), 42);
  const auto m = chaos::merge(c.first, c.second);
  EXPECT_EQ(m.local_size(), c.t.local_size());
  EXPECT_EQ(m.ghost_begin(), c.first.ghost_begin());
  EXPECT_EQ(m.ghost_end(), c.second.ghost_end());
  EXPECT_TRUE(figures_match(m.figures(), gather_truth(c.d, me(), [&](int p) {
    auto both = references(c.d, p, 1500, refs::mixed, 42);
    const auto more = references(c.d, p, 1500, refs::mixed, 43);
    both.insert(both.end(), more.begin(), more.end());
    return both;
  })));

  auto data = owned_values(c.d, me(), m.ghost_end());
  const auto messages = growth("chaos.messages", [&] { chaos::gather(m, std::span<std::int64_t>(data)); });
  EXPECT_EQ(messages, static_cast<std::uint64_t>(m.figures().peers_sent_to)) << "one message per pair";
  EXPECT_TRUE(reads_right_values(data, c.la, c.a));
  EXPECT_TRUE(reads_right_values(data, c.lb, c.b));
}

// The probe's: a node whose first schedule was empty returned from merge at once, leaving the
// others in the agreement they made (and its merged schedule was numbered apart from theirs).
// Here the last node owns nothing and references nothing in the first phase, so it keeps the
// empty schedule it began with (it takes part in the inspection, as every node must).
TEST_P(Inspector, MergeWithEmptyScheduleOnOneNode) {
  const auto d = random_distribution(size, nodes(), 46, /*last_node_empty=*/true);
  const auto t = table_for(d);
  const bool idle = me() == nodes() - 1;  // with one node, that node
  const auto a = idle ? std::vector<index>{} : references(d, me(), 1500, refs::mixed, 46);
  const auto b = references(d, me(), 1500, refs::mixed, 47);
  auto la = a, lb = b;
  chaos::schedule first;
  {
    auto built = chaos::inspect(t, {std::span<index>(la)});
    if (!idle) first = std::move(built);
  }
  const auto second = chaos::inspect(t, first, {std::span<index>(lb)});
  const auto m = chaos::merge(first, second);
  EXPECT_EQ(m.local_size(), t.local_size());
  EXPECT_EQ(m.ghost_end(), second.ghost_end());
  auto data = owned_values(d, me(), m.ghost_end());
  chaos::gather(m, std::span<std::int64_t>(data));
  EXPECT_TRUE(reads_right_values(data, la, a));
  EXPECT_TRUE(reads_right_values(data, lb, b));
  // The other way round, and two empty schedules on the idle node: still in step.
  const chaos::schedule none;
  const auto again = chaos::merge(second, idle ? none : first);
  data = owned_values(d, me(), again.ghost_end());
  chaos::gather(again, std::span<std::int64_t>(data));
  EXPECT_TRUE(reads_right_values(data, lb, b));
  const auto nothing = chaos::merge(none, idle ? none : first);
  EXPECT_EQ(nothing.ghosts(), idle ? 0 : first.ghosts());
  data = owned_values(d, me(), std::max(nothing.ghost_end(), t.local_size()));  // two empty ones: no ghost area
  chaos::gather(nothing, std::span<std::int64_t>(data));
  EXPECT_TRUE(reads_right_values(data, la, a));
}

INSTANTIATE_TEST_SUITE_P(Modes, Inspector, testing::Values(table_mode::replicated, table_mode::distributed), mode_name);

TEST(Schedule, DefaultMovesNothing) {
  const chaos::schedule s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.ghosts(), 0);
  EXPECT_TRUE(figures_match(s.figures(), movement{}));
}

}  // namespace
