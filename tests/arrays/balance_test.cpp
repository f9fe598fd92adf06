// SPDX-License-Identifier: BSD-3-Clause
// Measurement-based load balancing: elements all born on node 0 with skewed loads are
// spread by each strategy; messages reach every element afterwards; refine moves fewer
// elements than greedy; metis keeps a ring's neighbours together. Loads are the program's
// own (add_load), so the plans do not depend on the machine's noise; one test checks when
// the runtime times entry methods itself.
#include <gtest/gtest.h>

#include <squall/arrays.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace arrays = squall::arrays;

namespace {

int me() { return squall::node(); }
int nodes() { return squall::nodes(); }
int count() { return 16 * nodes(); }

struct Work;
arrays::array<Work, arrays::index1d>* ring = nullptr;

struct Work : arrays::element<arrays::index1d> {
  int calls = 0;
  double cost() const { return 1.0 + this_index()[0] % 4; }
  void step() {
    ++calls;
    add_load(cost());
  }
  // Talks to its ring neighbours (for metis's graph).
  void talk() {
    add_load(1.0);
    const int i = this_index()[0];
    (*ring)[(i + 1) % count()].call<&Work::hear>();
    (*ring)[(i + count() - 1) % count()].call<&Work::hear>();
  }
  void hear() {}
  // Runs for at least `ms` milliseconds of wall-clock time.
  void busy(int ms) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until) {
    }
  }
  template <class A>
  void serialize(A& ar) {
    ar(calls);
  }
};

// The most loaded node's load now, by the elements' cost model.
double max_node_load(const arrays::array<Work>& a) {
  double mine = 0;
  a.for_each_local([&](Work& w) { mine += w.cost(); });
  return squall::allreduce(mine, squall::op::max{});
}

void all_on_node_zero(const arrays::array<Work>& a) {
  if (me() == 0)
    for (int i = 0; i < count(); ++i) a.insert(i, 0);
  arrays::quiesce();
  if (me() == 0) a.broadcast<&Work::step>();
  arrays::quiesce();
}

TEST(ArraysBalance, GreedySpreadsASkewedLoad) {
  auto a = arrays::array<Work>::create();
  all_on_node_zero(a);
  const arrays::balance_report r = arrays::at_sync(a, arrays::strategy::greedy);
  EXPECT_EQ(r.elements, static_cast<std::size_t>(count()));
  // Costs 1, 2, 3, 4 repeating, plus the entry methods' own measured time: microseconds
  // on a quiet machine, but a preempted entry method adds milliseconds, so the measured part
  // is bounded by a share of the cost model, never by a wall-clock figure.
  const double model_max_before = 40.0 * nodes();
  EXPECT_GE(r.average, 40.0);
  EXPECT_LE(r.average, 40.0 * 1.01);
  EXPECT_GE(r.max_before, model_max_before);
  EXPECT_LE(r.max_before, model_max_before * 1.01);
  EXPECT_LE(r.max_after, r.average * 1.1);
  EXPECT_LE(max_node_load(a), r.max_after);
  EXPECT_GE(max_node_load(a), r.max_after / 1.01);
  EXPECT_GT(a.local_count(), 0u);
  // Every element still gets its messages, once.
  if (me() == 0) a.broadcast<&Work::step>();
  arrays::quiesce();
  int calls = 0;
  a.for_each_local([&](Work& w) { calls += w.calls; });
  EXPECT_EQ(squall::allreduce(calls), 2 * count());
}

TEST(ArraysBalance, RefineMovesFewerElementsThanGreedy) {
  auto a = arrays::array<Work>::create();
  all_on_node_zero(a);
  // Start from greedy's spread, then unbalance one node by a little: refine fixes it with a
  // few moves, greedy would reshuffle.
  arrays::at_sync(a, arrays::strategy::greedy);
  if (me() == 0) a.broadcast<&Work::step>();
  arrays::quiesce();
  if (me() == 0 && nodes() > 1) {
    a[0].call<&Work::step>();  // elements 0 and 4 cost 1: a small excess wherever they are
    a[4].call<&Work::step>();
  }
  arrays::quiesce();
  const arrays::balance_report r = arrays::at_sync(a, arrays::strategy::refine);
  EXPECT_LE(r.max_after, r.max_before);
  EXPECT_LE(r.migrations, static_cast<std::size_t>(nodes()));
}

// Entry methods are timed only in an array that measures its load: from measure_load(), or
// from its first at_sync on. The element's load is its entry methods' time (at least the
// time they ran for) and nothing before that.
TEST(ArraysBalance, EntryMethodsAreTimedWhereTheArrayMeasuresItsLoad) {
  auto a = arrays::array<Work>::create();
  a.insert(me(), me());  // element i on node i
  arrays::quiesce();
  const auto load_here = [&a] {
    double load = -1;
    a.for_each_local([&load](Work& w) { load = w.measured_load(); });
    return load;
  };
  a[me()].call<&Work::busy>(5);
  arrays::quiesce();
  EXPECT_EQ(load_here(), 0.0) << "timed before the array measured its load";
  a.measure_load();
  a[me()].call<&Work::busy>(5);
  arrays::quiesce();
  EXPECT_GE(load_here(), 0.005 * 0.98);
  a.measure_load(false);
  arrays::at_sync(a, arrays::strategy::refine);  // a new measurement, timed from here on
  EXPECT_EQ(load_here(), 0.0);
  a[me()].call<&Work::busy>(5);
  arrays::quiesce();
  EXPECT_GE(load_here(), 0.005 * 0.98);
}

TEST(ArraysBalance, MetisKeepsRingNeighboursTogether) {
  auto a = arrays::array<Work>::create();
  ring = &a;
  a.record_communication();
  // Scattered: element i on node i % nodes, so nearly every ring edge is cut.
  if (me() == 0)
    for (int i = 0; i < count(); ++i) a.insert(i, i % nodes());
  arrays::quiesce();
  if (me() == 0) a.broadcast<&Work::talk>();
  arrays::quiesce();
  const arrays::balance_report r = arrays::at_sync(a, arrays::strategy::metis);
  EXPECT_LE(r.max_after, r.average * 1.35);
  // Cut ring edges: neighbours on different nodes.
  std::vector<int> where(static_cast<std::size_t>(count()), -1);
  a.for_each_local([&](Work& w) { where[static_cast<std::size_t>(w.this_index()[0])] = me(); });
  std::vector<int> all(where.size());
  squall::allreduce(std::span<const int>(where), std::span<int>(all), squall::op::max{});
  int cut = 0;
  for (int i = 0; i < count(); ++i) cut += all[static_cast<std::size_t>(i)] != all[static_cast<std::size_t>((i + 1) % count())];
  EXPECT_LE(cut, 2 * nodes()) << "ring edges cut after metis";
  ring = nullptr;
}

}  // namespace
