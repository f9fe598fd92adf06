// SPDX-License-Identifier: BSD-3-Clause
// A failure on one node while the nodes quiesce (an entry method that throws, a reduction given
// two reducers that only node 0 sees) ends quiesce on every node, never leaving the others
// waiting: the node where it was thrown gets the exception, the others arrays::node_failed
// naming that node; nodes that create different arrays all throw. The runtime goes on working
// afterwards. Run on 1, 2, 4 and 8 nodes.
#include <gtest/gtest.h>

#include <squall/arrays.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

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

// Counts its calls; held at its home until it is inserted.
struct Counter : arrays::element<arrays::index1d> {
  std::int64_t hits = 0;
  void inc() { ++hits; }
  void step(int bad) {
    if (this_index()[0] == bad) throw std::runtime_error("step of element " + std::to_string(bad));
    ++hits;
  }
  void total() { contribute(hits, arrays::sum<std::int64_t>(), arrays::on_every_node<&got_sum>()); }
  void inc_here() { ++hits; }  // creates its element on demand (below)
  void go_then_throw(int to) {
    migrate_me(to);
    throw std::runtime_error("thrown after migrate_me");
  }
  void die_then_throw() {
    destroy_me();
    throw std::runtime_error("thrown after destroy_me");
  }
  void boom() { throw std::runtime_error("boom on node " + std::to_string(squall::node())); }
  std::int64_t get() const { return hits; }
  template <class A>
  void serialize(A& ar) {
    ar(hits);
  }
};

}  // namespace
template <>
inline constexpr bool arrays::creates_on_demand<&Counter::inc_here> = true;
namespace {

// Its load() throws on the node that sets refuse_to_unpack.
bool refuse_to_unpack = false;
struct Fragile : arrays::element<arrays::index1d> {
  std::int64_t value = 0;
  void set(std::int64_t v) { value = v; }
  std::int64_t get() const { return value; }
  void go(int to) { migrate_me(to); }
  template <class A>
  void save(A& ar) const {
    ar(value);
  }
  template <class A>
  void load(A& ar) {
    if (refuse_to_unpack) throw std::runtime_error("no unpacking here");
    ar(value);
  }
};

// Created by one node where the others create a Cell array.
struct Labelled : arrays::element<std::string> {
  std::int64_t value = 0;
  template <class A>
  void serialize(A& ar) {
    ar(value);
  }
};
struct Counted : arrays::element<arrays::index1d> {
  std::int64_t value = 0;
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

// The probe's: one node created its array with another element or index type than the
// others. Nothing was checked: each node went on with its own, and the elements the others
// inserted at its indices were made there as its own type, their index bytes read as its
// index type (a std::string of an index1d's 4 bytes), without a word. Now create() throws on
// every node, naming both, makes nothing, and the nodes' next arrays are in step.
TEST(ArraysFailure, NodesThatCreateDifferentArraysAllThrow) {
  if (nodes() < 2) GTEST_SKIP() << "needs two nodes";
  const int odd = nodes() - 1;
  const auto create_error = [](auto create) {
    try {
      create();
    } catch (const squall::usage_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string where = "node 0 creates array ";
  const std::string other = ", node " + std::to_string(odd) + " as an array of ";
  // Another index type.
  std::string what = create_error([&] {
    if (me() == odd) {
      arrays::array<Labelled>::create();
    } else {
      arrays::array<Cell>::create();
    }
  });
  EXPECT_NE(what.find(where), std::string::npos) << what;
  EXPECT_NE(what.find(other), std::string::npos) << what;
  EXPECT_NE(what.find("Labelled indexed by std::"), std::string::npos) << what;
  // Another element type with the same index type.
  what = create_error([&] {
    if (me() == odd) {
      arrays::array<Counted>::create();
    } else {
      arrays::array<Cell>::create();
    }
  });
  EXPECT_NE(what.find("Counted indexed by squall::arrays::index<1>"), std::string::npos) << what;
  EXPECT_NE(what.find("Cell indexed by squall::arrays::index<1>"), std::string::npos) << what;
  // In place on one node only: refused before any node allocates the segment.
  what = create_error([&] {
    if (me() == 0) {
      arrays::array<Cell>::create_in_place({.slot_bytes = 4096, .slots_per_node = 4});
    } else {
      arrays::array<Cell>::create();
    }
  });
  EXPECT_NE(what.find("in place (slots of 4096 bytes, 4 per node)"), std::string::npos) << what;
  expect_working();  // the same array ids on every node again
}

// The probe's: an element whose serialize() threw as it unpacked on the node it migrated to
// was never installed there, nor its home told: the old node pointed at the new one, the new
// one's entry at the home, the home at the old node, and a message to it went round the
// three for ever - quiesce never returned. It now lands and is deleted there at once, its
// messages held at its home and reported (a request's future fails), and quiesce says why.
TEST(ArraysFailure, AnElementThatDoesNotUnpackWhereItMigratedIsLostNotChased) {
  if (nodes() < 2) GTEST_SKIP() << "needs two nodes";
  const int odd = nodes() - 1;
  auto a = arrays::array<Fragile>::create();
  if (me() == 0) {
    a.insert(1, 0);
    a.insert(2, 0);
  }
  arrays::quiesce();
  refuse_to_unpack = me() == odd;
  if (me() == 0) a[1].call<&Fragile::go>(odd);
  const outcome o = quiesce_outcome();
  refuse_to_unpack = false;
  if (me() == odd) {
    EXPECT_EQ(o.kind, "usage_error") << o.what;
  } else {
    EXPECT_EQ(o.kind, "node_failed") << o.what;
    EXPECT_EQ(o.failed_node, odd);
  }
  EXPECT_NE(o.what.find("element (1) of array " + std::to_string(a.id()) + ", migrating from node 0, does not unpack here"),
            std::string::npos)
      << o.what;
  EXPECT_NE(o.what.find("no unpacking here"), std::string::npos) << o.what;
  // Messages to it wait at its home, and quiesce ends: a request's future fails.
  std::vector<arrays::future<std::int64_t>> asked;
  if (me() == 0) {
    a[1].call<&Fragile::set>(5);
    asked.push_back(a[1].request<&Fragile::get>());
    asked.push_back(a[2].request<&Fragile::get>());
  }
  EXPECT_EQ(quiesce_outcome().kind, "");
  if (me() == 0) {
    EXPECT_THROW(asked[0].get(), squall::usage_error);
    EXPECT_EQ(asked[1].get(), 0);  // the other element is untouched
  }
  EXPECT_EQ(squall::allreduce(static_cast<std::int64_t>(a.local_count())), 1);
  // The index can be used again.
  if (me() == 0) a.insert(1, odd);
  arrays::quiesce();
  if (me() == 0) a[1].call<&Fragile::set>(7);
  std::vector<arrays::future<std::int64_t>> again;
  if (me() == 0) again.push_back(a[1].request<&Fragile::get>());
  arrays::quiesce();
  if (me() == 0) {
    EXPECT_EQ(again[0].get(), 7);
  }
  a.destroy();
  expect_working();
}

// The probe's: messages sent before an insertion wait at the home, and the insertion runs
// them in order. When one of them threw, the ones held behind it, already taken out of the
// element's entry, were dropped without a word: 10 of 20 calls arrived. Now they all run,
// and quiesce throws what the one threw, as for a message that was not held.
TEST(ArraysFailure, MessagesHeldBehindOneThatThrowsAreStillDelivered) {
  constexpr int calls = 10;
  const int odd = nodes() - 1;
  auto a = arrays::array<Counter>::create();
  if (me() == 0) {
    for (int k = 0; k < calls; ++k) a[5].call<&Counter::inc>();
    a[5].call<&Counter::boom>();
    for (int k = 0; k < calls; ++k) a[5].call<&Counter::inc>();
    a.insert(5, odd);  // what was sent to it waits at its home until this
  }
  const outcome o = quiesce_outcome();
  if (me() == odd) {
    EXPECT_EQ(o.kind, "runtime_error") << o.what;
  } else {
    EXPECT_EQ(o.kind, "node_failed") << o.what;
  }
  EXPECT_NE(o.what.find("boom on node " + std::to_string(odd)), std::string::npos) << o.what;
  // A quiesce that threw ended its wave early: this one is the quiescent point.
  EXPECT_EQ(quiesce_outcome().kind, "");
  std::vector<arrays::future<std::int64_t>> asked;
  if (me() == 0) asked.push_back(a[5].request<&Counter::get>());
  EXPECT_EQ(quiesce_outcome().kind, "");
  if (me() == 0) {
    EXPECT_EQ(asked[0].get(), 2 * calls);
  }
  a.destroy();
  expect_working();
}

// The probe's: a broadcast whose method threw on one element left the other elements of that
// node without it, for good (one node of 40 elements: 7 had it). Every element but the one
// that threw has it now, and quiesce throws what that one threw.
TEST(ArraysFailure, ABroadcastReachesTheOtherElementsWhenOneThrows) {
  constexpr int per_node = 10, bad = 3;
  auto a = arrays::array<Counter>::create();
  for (int i = 0; i < per_node; ++i) a.insert(me() * per_node + i, me());
  arrays::quiesce();
  if (me() == 0) a.broadcast<&Counter::step>(bad);
  const outcome o = quiesce_outcome();
  EXPECT_NE(o.what.find("step of element " + std::to_string(bad)), std::string::npos) << o.what;
  EXPECT_EQ(quiesce_outcome().kind, "");
  summed = -1;
  if (me() == 0) a.broadcast<&Counter::total>();
  arrays::quiesce();
  EXPECT_EQ(summed, per_node * nodes() - 1);
  a.destroy();
  expect_working();
}

// The probe's: a migrate_me or destroy_me asked for by a one-way method that then threw
// stayed in the element's slot, and took effect after whichever method ran on it next, maybe
// much later (a call that merely touched it deleted it). It takes effect when the method
// throws, as it does for a request whose method throws.
TEST(ArraysFailure, AMigrationOrDeletionAskedForBeforeAThrowTakesEffectThen) {
  if (nodes() < 2) GTEST_SKIP() << "needs two nodes";
  const int odd = nodes() - 1;
  auto a = arrays::array<Counter>::create();
  if (me() == 0) {
    a.insert(1, 0);
    a.insert(2, 0);
    a.insert(3, 0);
  }
  arrays::quiesce();
  // One throw a round: two in one round may end two waves (each quiesce throws the first
  // exception its wave met).
  if (me() == 0) a[1].call<&Counter::go_then_throw>(odd);
  EXPECT_NE(quiesce_outcome().kind, "");
  EXPECT_EQ(quiesce_outcome().kind, "");
  if (me() == 0) a[2].call<&Counter::die_then_throw>();
  EXPECT_NE(quiesce_outcome().kind, "");
  EXPECT_EQ(quiesce_outcome().kind, "");
  EXPECT_EQ(a.local_count(), me() == 0 ? 1u : me() == odd ? 1u : 0u);  // 1 moved, 2 deleted
  EXPECT_EQ(squall::allreduce(static_cast<std::int64_t>(a.local_count())), 2);
  if (me() == 0) a[1].call<&Counter::inc>();
  EXPECT_EQ(quiesce_outcome().kind, "");
  EXPECT_EQ(a.local_count(), me() == 0 ? 1u : me() == odd ? 1u : 0u);  // nothing more happened
  a.destroy();
  expect_working();
}

// The probe's: a message that creates its element on demand first runs what the home held
// for the index; when one of those threw, the message itself was never delivered.
TEST(ArraysFailure, AMessageThatCreatesItsElementRunsWhenAHeldOneThrows) {
  auto a = arrays::array<Counter>::create();
  if (me() == 0) {
    a[9].call<&Counter::boom>();     // held at the home: no element, and it creates none
    a[9].call<&Counter::inc_here>();  // creates it, runs what was held, then itself
  }
  EXPECT_NE(quiesce_outcome().kind, "");
  EXPECT_EQ(quiesce_outcome().kind, "");
  std::vector<arrays::future<std::int64_t>> asked;
  if (me() == 0) asked.push_back(a[9].request<&Counter::get>());
  EXPECT_EQ(quiesce_outcome().kind, "");
  if (me() == 0) {
    EXPECT_EQ(asked[0].get(), 1);
  }
  a.destroy();
  expect_working();
}

}  // namespace
