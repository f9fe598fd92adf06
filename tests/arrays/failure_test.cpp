// SPDX-License-Identifier: BSD-3-Clause
// A failure on one node while the nodes quiesce (an entry method that throws, a reduction given
// two reducers that only node 0 sees) ends quiesce on every node, never leaving the others
// waiting: the node where it was thrown gets the exception, the others arrays::node_failed
// naming that node. The runtime goes on working afterwards. Run on 1, 2, 4 and 8 nodes.
#include <gtest/gtest.h>

#include <squall/arrays.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace arrays = squall::arrays;

namespace {

int me() { return squall::node(); }
int nodes() { return squall::nodes(); }

void ignore(const std::int64_t&) {}
std::int64_t summed = -1;
void got_sum(const std::int64_t& v) { summed = v; }

struct Cell : arrays::element<arrays::index1d> {
  std::int64_t value = 1;
  void boom() { throw std::runtime_error("boom on node " + std::to_string(squall::node())); }
  std::int64_t boom_value() { throw std::runtime_error("boom on node " + std::to_string(squall::node())); }
  void sum_it() { contribute(value, arrays::sum<std::int64_t>(), arrays::on_every_node<&got_sum>()); }
  // Node 0's elements sum, the others' take the max: each node's own values agree, so only
  // node 0, where the parts meet, sees two reducers.
  void sum_or_max() {
    if (squall::node() == 0) {
      contribute(value, arrays::sum<std::int64_t>(), arrays::on_root<&ignore>());
    } else {
      contribute(value, arrays::max<std::int64_t>(), arrays::on_root<&ignore>());
    }
  }
  template <class A>
  void serialize(A& ar) {
    ar(value);
  }
};

// One element per node, on that node.
arrays::array<Cell> one_per_node() {
  auto a = arrays::array<Cell>::create();
  a.insert(me(), me());
  arrays::quiesce();
  return a;
}

// What quiesce threw here: "" for nothing, else the exception's kind and text.
struct outcome {
  std::string kind, what;
  int failed_node = -1;
};
outcome quiesce_outcome() {
  try {
    arrays::quiesce();
  } catch (const arrays::node_failed& e) {
    return {"node_failed", e.what(), e.node()};
  } catch (const squall::usage_error& e) {
    return {"usage_error", e.what()};
  } catch (const std::runtime_error& e) {
    return {"runtime_error", e.what()};
  }
  return {};
}

// The runtime still works: a fresh array sums one value per node.
void expect_working() {
  auto a = one_per_node();
  summed = -1;
  a.broadcast<&Cell::sum_it>();
  arrays::quiesce();
  EXPECT_EQ(summed, nodes());
}

TEST(ArraysFailure, AnEntryMethodThatThrowsEndsQuiesceOnEveryNode) {
  auto a = one_per_node();
  const int thrower = nodes() - 1;
  if (me() == 0) a[thrower].call<&Cell::boom>();
  const outcome o = quiesce_outcome();
  const std::string text = "boom on node " + std::to_string(thrower);
  if (me() == thrower) {
    EXPECT_EQ(o.kind, "runtime_error") << o.what;
    EXPECT_EQ(o.what, text);
  } else {
    EXPECT_EQ(o.kind, "node_failed") << o.what;
    EXPECT_EQ(o.failed_node, thrower);
    EXPECT_NE(o.what.find("node " + std::to_string(thrower) + " failed: " + text), std::string::npos) << o.what;
  }
  expect_working();
}

TEST(ArraysFailure, EveryNodeThatThrowsGetsItsOwnException) {
  auto a = one_per_node();
  a[me()].call<&Cell::boom>();
  const outcome o = quiesce_outcome();
  EXPECT_EQ(o.kind, "runtime_error") << o.what;  // each node threw its own
  EXPECT_EQ(o.what, "boom on node " + std::to_string(me()));
  expect_working();
}

// The probe's: the exception reached only the scheduler of the node where the method ran, so
// node 0 waited in get() for ever, and the thrower in quiesce for node 0 (no message).
TEST(ArraysFailure, ARequestWhoseMethodThrowsFailsItsFuture) {
  auto a = one_per_node();
  const int thrower = nodes() - 1;
  if (me() == 0) {
    auto f = a[thrower].request<&Cell::boom_value>();
    std::string what;
    try {
      f.get();
    } catch (const squall::usage_error& e) {
      what = e.what();
    }
    EXPECT_NE(what.find("failed on node " + std::to_string(thrower) + ": boom on node " + std::to_string(thrower)),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("boom_value"), std::string::npos) << what;
  }
  const outcome o = quiesce_outcome();  // the failure was the requester's: nothing fails here
  EXPECT_EQ(o.kind, "") << o.what;
  expect_working();
}

// The probe's: an index inserted on node 0, then again by its home (another node). The home
// holds the second insertion, as if a deletion were on its way, and quiesce used to report
// "message(s) for elements that do not exist"; had the element been deleted later, the held
// insertion would have made a new one. Quiesce throws it on every node, and drops it.
TEST(ArraysFailure, AnIndexInsertedTwiceOnTwoNodesFailsQuiesceOnEveryNode) {
  if (nodes() < 2) GTEST_SKIP() << "needs two nodes";
  auto a = arrays::array<Cell>::create();
  int i = 0;
  while (arrays::hash_home().home_of(arrays::key_of(arrays::index1d{i}), nodes()) == 0) ++i;
  const int home = arrays::hash_home().home_of(arrays::key_of(arrays::index1d{i}), nodes());
  if (me() == 0) a.insert(i, 0);
  arrays::quiesce();
  if (me() == home) a.insert(i);  // at the home, which knows the element is on node 0
  const outcome o = quiesce_outcome();
  EXPECT_EQ(o.kind, "usage_error") << o.what;
  EXPECT_NE(o.what.find("libarrays: insert of element (" + std::to_string(i) + ") into array "), std::string::npos)
      << o.what;
  EXPECT_NE(o.what.find("it exists already, on node 0"), std::string::npos) << o.what;
  EXPECT_EQ(a.local_count(), me() == 0 ? 1u : 0u);
  EXPECT_EQ(quiesce_outcome().kind, "");  // dropped: not said again
  expect_working();
}

TEST(ArraysFailure, ReducersThatDifferBetweenNodesEndQuiesceOnEveryNode) {
  if (nodes() < 2) GTEST_SKIP() << "needs two nodes";
  auto a = one_per_node();
  a[me()].call<&Cell::sum_or_max>();
  const outcome o = quiesce_outcome();
  if (me() == 0) {
    EXPECT_EQ(o.kind, "usage_error") << o.what;
    EXPECT_NE(o.what.find("two reducers"), std::string::npos) << o.what;
  } else {
    EXPECT_EQ(o.kind, "node_failed") << o.what;
    EXPECT_EQ(o.failed_node, 0);
    EXPECT_NE(o.what.find("two reducers"), std::string::npos) << o.what;
  }
  expect_working();
}

}  // namespace
