// SPDX-License-Identifier: BSD-3-Clause
// Bad input is a usage_error, and the library still works afterwards. Every node makes the same
// mistake, so collectives stay matched (scatter_append's also when one node makes it); errors a
// single node makes (lookups) are local.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <squall/chaos/remap.hpp>
#include <squall/chaos/schedule.hpp>

#include "reference.hpp"

namespace chaos = squall::chaos;
using namespace chaos_test;
using chaos::table_mode;
using squall::usage_error;

namespace {

using squall::chaos::index;  // not ::index from <strings.h>

constexpr index size = 1000;

// What `use` throws (empty if it throws nothing).
template <class F>
std::string usage_error_of(F&& use) {
  try {
    use();
  } catch (const usage_error& e) {
    return e.what();
  }
  return {};
}

// `use` of a handle of `type` that was moved from is refused, naming the mistake.
template <class F>
void expect_moved_from(const std::string& type, F&& use, const char* what) {
  const std::string error = usage_error_of(use);
  EXPECT_NE(error.find("a " + type + " that was moved from"), std::string::npos) << what << ": " << error;
}

class Errors : public testing::TestWithParam<table_mode> {
 protected:
  // A correct table and inspection right after the error: the nodes are still in step.
  void still_works() const {
    const auto d = random_distribution(size, nodes(), 119);
    const chaos::translation_table t(d.owned_by(me()), size, GetParam(), 64);
    const auto original = references(d, me(), 1000, refs::mixed, 119);
    auto localized = original;
    const auto s = chaos::inspect(t, {std::span<index>(localized)});
    auto data = owned_values(d, me(), s.ghost_end());
    chaos::gather(s, std::span<std::int64_t>(data));
    EXPECT_TRUE(reads_right_values(data, localized, original));
  }
  void expect_bad_list(std::vector<index> owned, const char* what) const {
    EXPECT_THROW(chaos::translation_table(owned, size, GetParam(), 64), usage_error) << what;
    still_works();
  }
  std::vector<index> owned_list() const {
    const auto d = random_distribution(size, nodes(), 111);
    return {d.owned_by(me()).begin(), d.owned_by(me()).end()};
  }
  // Node 0 gives another global size, mode or page size than the others: every node must get
  // the error naming that parameter and both values.
  void expect_nodes_differ(index global_size, table_mode mode, index page_size, const std::string& expected) const {
    std::string what;
    try {
      chaos::translation_table(owned_list(), global_size, mode, page_size);
      ADD_FAILURE() << "a table built from parameters that differ between the nodes";
    } catch (const usage_error& e) {
      what = e.what();
    }
    EXPECT_NE(what.find(expected), std::string::npos) << "node " << me() << ": " << what;
    still_works();
  }
};

// The mistakes are all on node 0 (whose list is never empty with this seed); every node must
// see the error.
TEST_P(Errors, OwnedListMissingAnIndex) {
  auto owned = owned_list();
  ASSERT_FALSE(owned.empty());
  if (me() == 0) owned.pop_back();
  expect_bad_list(owned, "missing");
}

TEST_P(Errors, OwnedListWithARepeatedIndex) {
  auto owned = owned_list();
  if (me() == 0) owned.push_back(owned.front());
  expect_bad_list(owned, "repeated (one too many)");
}

TEST_P(Errors, OwnedListRepeatingOneAndMissingAnother) {
  // The right number of indices: only a check of each index finds it.
  auto owned = owned_list();
  if (me() == 0) owned.back() = owned.front();
  expect_bad_list(owned, "repeated and missing");
}

TEST_P(Errors, BlockTableOfNegativeSize) {
  EXPECT_THROW(chaos::translation_table::block(-5, GetParam()), usage_error);
  still_works();
}

// A negative size given to one node only was refused on that node alone, before the
// collective constructor the other nodes went on into.
TEST_P(Errors, BlockTableOfNegativeSizeOnOneNode) {
  const std::string what =
      usage_error_of([&] { chaos::translation_table::block(me() == 0 ? -5 : size, GetParam()); });
  const std::string expected = nodes() == 1 ? "global size -5 is negative" : "the global size differs between nodes";
  EXPECT_NE(what.find(expected), std::string::npos) << what;
  still_works();
}

// Two schedules inspected apart fill the same ghost slots with different indices: merging
// them would lose one; every node refuses it.
TEST_P(Errors, MergeOfSchedulesInspectedApart) {
  if (nodes() == 1) GTEST_SKIP() << "one node has no ghosts";
  const auto d = random_distribution(size, nodes(), 117);
  const chaos::translation_table t(d.owned_by(me()), size, GetParam(), 64);
  auto first = references(d, me(), 500, refs::mixed, 118);
  auto second = references(d, me(), 500, refs::mixed, 119);
  const auto a = chaos::inspect(t, {std::span<index>(first)});
  const auto b = chaos::inspect(t, {std::span<index>(second)});
  EXPECT_THROW(chaos::merge(a, b), usage_error);
  auto third = references(d, me(), 500, refs::mixed, 120);
  const auto c = chaos::inspect(t, a, {std::span<index>(third)});  // built on a: merges
  EXPECT_NO_THROW(chaos::merge(a, c));
  still_works();
}

// The probe's: the local sizes were compared before the nodes agreed, so the nodes whose
// sizes differed threw alone and the others waited for them in the agreement. Here node 0
// gives an element to the last node in the second table: with three nodes or more, the nodes
// between them see no problem of their own.
TEST_P(Errors, MergeOfSchedulesForDifferentLocalSizesOnSomeNodes) {
  const auto first = chaos::translation_table::block(size, GetParam());
  std::vector<index> owned(first.owned().begin(), first.owned().end());
  const index given = size / nodes() + (size % nodes() > 0 ? 1 : 0) - 1;  // node 0's last
  if (me() == 0) owned.pop_back();
  if (me() == nodes() - 1) owned.push_back(given);
  const chaos::translation_table second(owned, size, GetParam());
  const auto a = chaos::inspect(first, {});
  const auto b = chaos::inspect(second, {});
  const std::string what = usage_error_of([&] { chaos::merge(a, b); });
  if (nodes() == 1) {
    EXPECT_EQ(what, "") << "one node gives itself its own element";
  } else if (me() == 0 || me() == nodes() - 1) {
    EXPECT_NE(what.find("chaos::merge: the schedules were built for distributions of different local sizes"),
              std::string::npos) << what;
  } else {
    EXPECT_NE(what.find("chaos::merge: another node found its input invalid"), std::string::npos) << what;
  }
  still_works();
}

// The probe's: a node whose schedule was empty returned from merge before the agreement, so
// the others, refusing their own input, waited for it there. Node 0 merges an empty schedule
// here, the others two schedules inspected apart: every node is refused.
TEST_P(Errors, MergeRefusedWhereOneNodesScheduleIsEmpty) {
  if (nodes() == 1) GTEST_SKIP() << "one node is the one with the empty schedule";
  const auto d = random_distribution(size, nodes(), 117);
  const chaos::translation_table t(d.owned_by(me()), size, GetParam(), 64);
  auto first = references(d, me(), 500, refs::mixed, 118);
  auto second = references(d, me(), 500, refs::mixed, 119);
  auto a = chaos::inspect(t, {std::span<index>(first)});
  const auto b = chaos::inspect(t, {std::span<index>(second)});
  if (me() == 0) a = chaos::schedule();
  const std::string what = usage_error_of([&] { chaos::merge(a, b); });
  if (me() == 0) {
    EXPECT_NE(what.find("chaos::merge: another node found its input invalid"), std::string::npos) << what;
  } else {
    EXPECT_NE(what.find("chaos::merge: ghost slot"), std::string::npos) << what;
  }
  still_works();
}

// A schedule moved from on node 0 alone: merge was refused there before the agreement the
// others went on into. Now every node is refused.
TEST_P(Errors, MergeOfScheduleMovedFromOnOneNode) {
  const auto d = random_distribution(size, nodes(), 127);
  const chaos::translation_table t(d.owned_by(me()), size, GetParam(), 64);
  auto first = references(d, me(), 500, refs::mixed, 127);
  auto second = references(d, me(), 500, refs::mixed, 128);
  auto a = chaos::inspect(t, {std::span<index>(first)});
  const auto b = chaos::inspect(t, a, {std::span<index>(second)});
  chaos::schedule kept;
  if (me() == 0) kept = std::move(a);
  const std::string what = usage_error_of([&] { chaos::merge(a, b); });
  if (me() == 0) {
    EXPECT_NE(what.find("a chaos::schedule that was moved from"), std::string::npos) << what;
  } else {
    EXPECT_NE(what.find("chaos::merge: another node found its input invalid"), std::string::npos) << what;
  }
  still_works();
}

// Merge names which of its schedules was moved from, in its own words: it once took the text of
// the usage_error internals() threw and cut its prefixes off.
TEST_P(Errors, MergeNamesTheScheduleMovedFrom) {
  const auto d = random_distribution(size, nodes(), 129);
  const chaos::translation_table t(d.owned_by(me()), size, GetParam(), 64);
  auto first = references(d, me(), 500, refs::mixed, 129);
  auto second = references(d, me(), 500, refs::mixed, 130);
  auto a = chaos::inspect(t, {std::span<index>(first)});
  auto b = chaos::inspect(t, a, {std::span<index>(second)});
  const std::string moved = "a chaos::schedule that was moved from (what it held went to the object it was moved "
                            "into; assign it a new one before using it again)";
  auto kept_a = std::move(a);
  EXPECT_EQ(usage_error_of([&] { chaos::merge(a, b); }), "squall: chaos::merge: the first schedule is " + moved);
  a = std::move(kept_a);
  auto kept_b = std::move(b);
  EXPECT_EQ(usage_error_of([&] { chaos::merge(a, b); }), "squall: chaos::merge: the second schedule is " + moved);
  b = std::move(kept_b);
  EXPECT_NO_THROW(chaos::merge(a, b));  // assigned anew: merged as before
  still_works();
}

// The incremental inspector given an earlier schedule moved from on node 0 alone: it was refused
// there before the agreement, and the other nodes went on into it while node 0 went on to the
// next collective (the job ended out of step). Now every node is refused.
TEST_P(Errors, InspectOnScheduleMovedFromOnOneNode) {
  const auto d = random_distribution(size, nodes(), 131);
  const chaos::translation_table t(d.owned_by(me()), size, GetParam(), 64);
  auto first = references(d, me(), 500, refs::mixed, 131);
  auto second = references(d, me(), 500, refs::mixed, 132);
  auto a = chaos::inspect(t, {std::span<index>(first)});
  chaos::schedule kept;
  if (me() == 0) kept = std::move(a);
  const std::string what = usage_error_of([&] { chaos::inspect(t, a, {std::span<index>(second)}); });
  if (me() == 0) {
    EXPECT_NE(what.find("chaos::inspect: the earlier schedule is a chaos::schedule that was moved from"),
              std::string::npos)
        << what;
  } else {
    EXPECT_NE(what.find("chaos::inspect: another node found its input invalid"), std::string::npos) << what;
  }
  still_works();
}

TEST_P(Errors, OwnedListOutOfRange) {
  auto owned = owned_list();
  if (me() == 0) owned.back() = size;
  expect_bad_list(owned, "index == global_size");
  owned = owned_list();
  if (me() == 0) owned.push_back(-1);
  expect_bad_list(owned, "negative index");
}

TEST_P(Errors, LookupOutOfRange) {
  const auto d = random_distribution(size, nodes(), 112);
  const chaos::translation_table t(d.owned_by(me()), size, GetParam(), 64);
  for (const index bad : {index{-1}, size}) {
    const std::vector<index> q{0, bad};
    EXPECT_THROW(t.lookup(q), usage_error) << bad;
  }
  squall::barrier();
  const std::vector<index> q{0, size - 1};
  EXPECT_EQ(t.lookup(q)[1], (chaos::location{d.owner_of(size - 1), d.offset_of(size - 1)}));
  squall::barrier();  // every node's lookups are answered before any node destroys its part of t
}

TEST_P(Errors, InspectOutOfRange) {
  const auto d = random_distribution(size, nodes(), 113);
  const chaos::translation_table t(d.owned_by(me()), size, GetParam(), 64);
  for (const index bad : {index{-1}, size}) {
    auto refs = references(d, me(), 500, refs::mixed, 113);
    refs[refs.size() / 2] = bad;
    EXPECT_THROW(chaos::inspect(t, {std::span<index>(refs)}), usage_error) << bad;
  }
  // ... also in the incremental inspector.
  auto first = references(d, me(), 500, refs::mixed, 114);
  const auto s = chaos::inspect(t, {std::span<index>(first)});
  auto second = references(d, me(), 500, refs::mixed, 115);
  second.back() = size + 5;
  EXPECT_THROW(chaos::inspect(t, s, {std::span<index>(second)}), usage_error);
  still_works();
}

TEST_P(Errors, DataSmallerThanGhostEnd) {
  const auto d = random_distribution(size, nodes(), 116);
  const chaos::translation_table t(d.owned_by(me()), size, GetParam(), 64);
  auto refs = references(d, me(), 1000, refs::mixed, 116);
  const auto s = chaos::inspect(t, {std::span<index>(refs)});
  ASSERT_GT(s.ghost_end(), 0);
  std::vector<std::int64_t> data(static_cast<std::size_t>(s.ghost_end()));
  const auto short_data = std::span<std::int64_t>(data).first(data.size() - 1);
  EXPECT_THROW(chaos::gather(s, short_data), usage_error);
  EXPECT_THROW(chaos::scatter(s, short_data), usage_error);
  EXPECT_THROW(chaos::scatter_op(s, short_data), usage_error);
  EXPECT_THROW(chaos::gather_begin(s, short_data), usage_error);
  EXPECT_THROW(chaos::scatter_op_begin(s, short_data, chaos::combine::min{}), usage_error);
  still_works();
}

TEST_P(Errors, RemapWithWrongSizes) {
  const auto a = random_distribution(size, nodes(), 117);
  const auto b = random_distribution(size, nodes(), 118);
  const chaos::translation_table ta(a.owned_by(me()), size, GetParam(), 64), tb(b.owned_by(me()), size, GetParam(), 64);
  const chaos::remap_plan plan(ta, tb);
  const std::vector<std::int64_t> in(static_cast<std::size_t>(plan.from_size()) + 1);
  std::vector<std::int64_t> out(static_cast<std::size_t>(plan.to_size()) + 1);
  EXPECT_THROW(plan.apply(std::span<const std::int64_t>(in)), usage_error) << "input one too long";
  const auto right_in = std::span<const std::int64_t>(in).first(in.size() - 1);
  EXPECT_THROW(plan.apply(right_in, std::span<std::int64_t>(out)), usage_error) << "output one too long";
  if (plan.from_size() > 0) {
    EXPECT_THROW(plan.apply(right_in.first(right_in.size() - 1)), usage_error) << "input one too short";
  }
  // Then a right one.
  std::vector<std::int64_t> values;
  for (index g : a.owned_by(me())) values.push_back(value_of(g));
  const auto moved = plan.apply(std::span<const std::int64_t>(values));
  EXPECT_TRUE(every(moved.size(), [&](std::size_t k) { return describe(k, moved[k], value_of(b.owned_by(me())[k])); }));
}

TEST_P(Errors, RemapBetweenDifferentGlobalSizes) {
  const auto a = random_distribution(size, nodes(), 120);
  const auto b = random_distribution(size + 1, nodes(), 121);
  const chaos::translation_table ta(a.owned_by(me()), size, GetParam(), 64);
  const chaos::translation_table tb(b.owned_by(me()), size + 1, GetParam(), 64);
  EXPECT_THROW(chaos::remap_plan(ta, tb), usage_error);
  still_works();
}

TEST_P(Errors, OwnedAfterWithBadNewOwners) {
  // Node 0's mistake is seen on every node.
  const auto a = random_distribution(size, nodes(), 122);
  const chaos::translation_table ta(a.owned_by(me()), size, GetParam(), 64);
  std::vector<int> new_owner(a.owned_by(me()).size(), 0);
  if (me() == 0) new_owner.push_back(0);
  EXPECT_THROW(chaos::owned_after(ta, new_owner), usage_error) << "one too many";
  new_owner.assign(a.owned_by(me()).size(), 0);
  if (me() == 0) new_owner.front() = nodes();
  EXPECT_THROW(chaos::owned_after(ta, new_owner), usage_error) << "not a node";
  still_works();
}

// The probe's: with page sizes that differ, the nodes computed different holders and reported
// "global index ... is owned twice" (a distributed table; a replicated one ignored it).
TEST_P(Errors, PageSizesThatDifferBetweenNodes) {
  if (nodes() == 1) GTEST_SKIP() << "one node agrees with itself";
  expect_nodes_differ(size, GetParam(), me() == 0 ? 32 : 64,
                      "chaos::translation_table: the page size differs between nodes (32 on some, 64 on others)");
}

TEST_P(Errors, ModesThatDifferBetweenNodes) {
  if (nodes() == 1) GTEST_SKIP() << "one node agrees with itself";
  const table_mode other = GetParam() == table_mode::replicated ? table_mode::distributed : table_mode::replicated;
  expect_nodes_differ(size, me() == 0 ? other : GetParam(), 64,
                      "chaos::translation_table: the mode differs between nodes (replicated on some, distributed on others)");
}

TEST_P(Errors, GlobalSizesThatDifferBetweenNodes) {
  if (nodes() == 1) GTEST_SKIP() << "one node agrees with itself";
  expect_nodes_differ(me() == 0 ? size + 1 : size, GetParam(), 64,
                      "chaos::translation_table: the global size differs between nodes (1000 on some, 1001 on others)");
}

// The probe's: a schedule moved from acted as an empty one, so its node skipped the gather
// the others waited in and the job ended "out of step", naming no cause. Its use now throws
// on its node before the call is numbered; every node makes the mistake here, so the nodes
// stay in step.
TEST_P(Errors, ScheduleMovedFrom) {
  const auto d = random_distribution(size, nodes(), 124);
  const chaos::translation_table t(d.owned_by(me()), size, GetParam(), 64);
  auto refs = references(d, me(), 500, refs::mixed, 124);
  auto s = chaos::inspect(t, {std::span<index>(refs)});
  std::vector<std::int64_t> data(static_cast<std::size_t>(s.ghost_end()));
  const auto span = std::span<std::int64_t>(data);
  auto moved = std::move(s);
  expect_moved_from("chaos::schedule", [&] { chaos::gather(s, span); }, "gather");
  expect_moved_from("chaos::schedule", [&] { chaos::scatter(s, span); }, "scatter");
  expect_moved_from("chaos::schedule", [&] { chaos::scatter_op(s, span); }, "scatter_op");
  expect_moved_from("chaos::schedule", [&] { chaos::gather_begin(s, span); }, "gather_begin");
  expect_moved_from("chaos::schedule", [&] { chaos::merge(s, moved); }, "merge");
  auto more = references(d, me(), 500, refs::mixed, 125);
  expect_moved_from("chaos::schedule", [&] { chaos::inspect(t, s, {std::span<index>(more)}); }, "inspect on it");
  expect_moved_from("chaos::schedule", [&] { (void)s.ghost_end(); }, "ghost_end");
  // A default-constructed schedule is still an empty one, and one assigned anew is usable.
  const chaos::schedule empty;
  EXPECT_NO_THROW(chaos::gather(empty, span));
  s = std::move(moved);
  chaos::gather(s, span);
  still_works();
}

// The other handles the same: a table, a plan, split-phase executions.
TEST_P(Errors, TableAndPlanMovedFrom) {
  const auto d = random_distribution(size, nodes(), 126);
  chaos::translation_table t(d.owned_by(me()), size, GetParam(), 64);
  const auto moved_table = std::move(t);
  const std::vector<index> q{0, size - 1};
  expect_moved_from("chaos::translation_table", [&] { t.lookup(q); }, "lookup");
  expect_moved_from("chaos::translation_table", [&] { (void)t.local_size(); }, "local_size");
  auto refs = references(d, me(), 500, refs::mixed, 126);
  expect_moved_from("chaos::translation_table", [&] { chaos::inspect(t, {std::span<index>(refs)}); }, "inspect");
  expect_moved_from("chaos::translation_table", [&] { chaos::remap_plan(t, moved_table); }, "remap_plan");

  chaos::remap_plan plan(moved_table, moved_table);
  const auto moved_plan = std::move(plan);
  const std::vector<std::int64_t> in(static_cast<std::size_t>(moved_plan.from_size()));
  expect_moved_from("chaos::remap_plan", [&] { plan.apply(std::span<const std::int64_t>(in)); }, "apply");
  expect_moved_from("chaos::remap_plan", [&] { (void)plan.to_size(); }, "to_size");
  EXPECT_EQ(moved_plan.apply(std::span<const std::int64_t>(in)).size(), static_cast<std::size_t>(moved_plan.to_size()));
  squall::barrier();  // every node's lookups are answered before any node destroys its part of the table
  still_works();
}

INSTANTIATE_TEST_SUITE_P(Modes, Errors, testing::Values(table_mode::replicated, table_mode::distributed), mode_name);

// Ending a split-phase execution through the handle it was moved out of: it once returned at
// once (an execution) with the data not there yet, or said the exchange "was already ended".
TEST(ErrorsSplitPhase, ExecutionsMovedFrom) {
  const auto d = random_distribution(size, nodes(), 127);
  const chaos::translation_table t(d.owned_by(me()), size, table_mode::replicated, 64);
  const auto original = references(d, me(), 500, refs::mixed, 127);
  auto localized = original;
  const auto s = chaos::inspect(t, {std::span<index>(localized)});
  auto data = owned_values(d, me(), s.ghost_end());
  auto e = chaos::gather_begin(s, std::span<std::int64_t>(data));
  auto moved = std::move(e);
  expect_moved_from("chaos::execution", [&] { e.end(); }, "execution::end");
  moved.end();
  EXPECT_TRUE(reads_right_values(data, localized, original));

  const std::vector<int> items{1, 2, 3}, dest{0, 0, 0};
  auto a = chaos::scatter_append_begin(std::span<const int>(items), std::span<const int>(dest));
  auto moved_append = std::move(a);
  expect_moved_from("chaos::append_execution", [&] { a.end(); }, "append_execution::end");
  EXPECT_EQ(moved_append.end().size(), me() == 0 ? 3u * static_cast<std::size_t>(nodes()) : 0u);

  auto h = chaos::exchange_begin(std::vector<std::vector<std::byte>>(static_cast<std::size_t>(nodes())));
  auto moved_handle = std::move(h);
  expect_moved_from("chaos::exchange_handle", [&] { h.end(); }, "exchange_handle::end");
  EXPECT_EQ(moved_handle.end().size(), static_cast<std::size_t>(nodes()));
}

TEST(ErrorsScatterAppend, BadDestination) {
  const std::vector<int> items{1, 2, 3};
  for (const int bad : {-1, nodes()}) {
    const std::vector<int> dest{0, bad, 0};
    EXPECT_THROW(chaos::scatter_append(std::span<const int>(items), std::span<const int>(dest)), usage_error) << bad;
  }
  const std::vector<int> too_few{0, 0};
  EXPECT_THROW(chaos::scatter_append(std::span<const int>(items), std::span<const int>(too_few)), usage_error);

  const auto t = chaos::translation_table::block(size);
  const std::vector<index> bad_element{0, size, 1};
  EXPECT_THROW(chaos::scatter_append(t, std::span<const int>(items), std::span<const index>(bad_element)), usage_error);

  const std::vector<int> dest{0, 0, 0};
  const auto arrived = chaos::scatter_append(std::span<const int>(items), std::span<const int>(dest));
  EXPECT_EQ(arrived.size(), me() == 0 ? 3u * static_cast<std::size_t>(nodes()) : 0u);
}

// The probe's: a bad destination (or item count) on one node only was thrown there alone,
// before the exchange; the other nodes went on into its allreduce and the job ended with
// "collective mismatch: this node called allreduce but node 2 called barrier", not naming
// the bad input. The exchange's allreduce now carries every node's verdict: every node
// throws, nothing is sent, and the nodes are still in step.
TEST(ErrorsScatterAppend, BadInputOnOneNodeIsRefusedOnEveryNode) {
  if (nodes() < 2) GTEST_SKIP() << "needs two nodes";
  const int odd = nodes() - 1;
  const std::vector<int> items{1, 2, 3};
  const auto what_of = [](auto&& f) {
    try {
      f();
    } catch (const usage_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const auto expect_refused = [&](const std::string& what, const std::string& mine) {
    if (me() == odd) {
      EXPECT_NE(what.find("chaos::scatter_append: " + mine), std::string::npos) << what;
    } else {
      EXPECT_NE(what.find("chaos::scatter_append: another node found its input invalid"), std::string::npos) << what;
    }
  };
  const std::vector<int> dest{0, me() == odd ? nodes() : 0, 0};
  expect_refused(what_of([&] { chaos::scatter_append(std::span<const int>(items), std::span<const int>(dest)); }),
                 "destination node " + std::to_string(nodes()) + " (of item 1) does not exist");
  const std::vector<int> short_dest(me() == odd ? 2u : 3u, 0);
  expect_refused(what_of([&] { chaos::scatter_append(std::span<const int>(items), std::span<const int>(short_dest)); }),
                 "one destination per item is needed (3 items, 2 destinations)");
  const auto t = chaos::translation_table::block(size);
  const std::vector<index> element{0, me() == odd ? size : 1, 2};
  expect_refused(
      what_of([&] { chaos::scatter_append(t, std::span<const int>(items), std::span<const index>(element)); }),
      "chaos::translation_table::lookup: global index " + std::to_string(size));
  // Still in step: a good one moves every item.
  const std::vector<int> to_zero{0, 0, 0};
  const auto arrived = chaos::scatter_append(std::span<const int>(items), std::span<const int>(to_zero));
  EXPECT_EQ(arrived.size(), me() == 0 ? 3u * static_cast<std::size_t>(nodes()) : 0u);
}

TEST(ErrorsExchange, OneBufferPerNodeIsNeeded) {
  std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(nodes()) + 1);
  EXPECT_THROW(chaos::exchange(out), usage_error);
  out.pop_back();
  EXPECT_EQ(chaos::exchange(out).size(), static_cast<std::size_t>(nodes()));
}

}  // namespace
