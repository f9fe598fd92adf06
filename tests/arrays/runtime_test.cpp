// SPDX-License-Identifier: BSD-3-Clause
// libarrays end to end, on every node of the job (squallrun -n 1..8): messages, results,
// broadcasts and reductions, early messages, creation on demand, deletion, and exactly-once
// delivery while elements migrate, checked by exact counts.
#include <gtest/gtest.h>
#include <malloc.h>

#include <squall/arrays.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace arrays = squall::arrays;

namespace {

struct Counter : arrays::element<arrays::index1d> {
  std::int64_t total = 0;
  int hits = 0;
  void add(std::int64_t x) {
    total += x;
    ++hits;
  }
  std::int64_t value() const { return total; }
  int where() const { return squall::node(); }
  void go(int to) { migrate_me(to); }
  // Moves on, and once there tells element 0 through its own array's proxy.
  void go_and_tell(int to) {
    tell = true;
    migrate_me(to);
  }
  void on_migrated() override {
    ++arrivals;
    if (tell) arrays::array<Counter>::of(*this)[0].call<&Counter::add>(std::int64_t{100});
    tell = false;
  }
  int arrivals = 0;
  bool tell = false;
  void report() { contribute(total, arrays::sum<std::int64_t>(), arrays::on_every_node<&Counter_total>()); }
  static void Counter_total(const std::int64_t& v);
  template <class A>
  void serialize(A& ar) {
    ar(total, hits, arrivals, tell);
  }
};

std::int64_t last_total = -1;
int totals_seen = 0;
void Counter::Counter_total(const std::int64_t& v) {
  last_total = v;
  ++totals_seen;
}

int me() { return squall::node(); }
int nodes() { return squall::nodes(); }

// A soak probe found every request kept a 48-byte record for good. Node 0 asks an element on
// the last node 5000 times while the others run their schedulers in quiesce.
TEST(Arrays, FuturesLeaveNothingBehind) {
  auto a = arrays::array<Counter>::create();
  if (me() == 0) a.insert(0, nodes() - 1);
  arrays::quiesce();
  const auto heap = [] {
    const struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
  };
  if (me() == 0) {
    for (int i = 0; i < 500; ++i) a[0].request<&Counter::value>().get();  // warm up
    const std::size_t before = heap();
    for (int i = 0; i < 5000; ++i) EXPECT_EQ(a[0].request<&Counter::value>().get(), 0);
    const std::size_t after = heap();
    // Under a sanitizer's allocator mallinfo2 reports nothing: then there is nothing to check.
    EXPECT_LT(after > before ? after - before : 0, std::size_t{64} << 10) << before << " -> " << after;
  }
  arrays::quiesce();
}

TEST(Arrays, MessagesReachTheirElementsAndResultsComeBack) {
  auto a = arrays::array<Counter>::create();
  constexpr int n = 40;
  if (me() == 0)
    for (int i = 0; i < n; ++i) a.insert(i);
  arrays::quiesce();
  for (int i = 0; i < n; ++i) a[i].call<&Counter::add>(std::int64_t{me() + 1});
  arrays::quiesce();
  const std::int64_t each = static_cast<std::int64_t>(nodes()) * (nodes() + 1) / 2;
  // A result needs the element's node to run its scheduler: ask, then quiesce together.
  std::vector<arrays::future<std::int64_t>> values;
  if (me() == 0)
    for (int i = 0; i < n; ++i) values.push_back(a[i].request<&Counter::value>());
  arrays::quiesce();
  for (int i = 0; i < static_cast<int>(values.size()); ++i) EXPECT_EQ(values[i].get(), each) << i;
  std::size_t here = a.local_count();
  EXPECT_EQ(squall::allreduce(here), static_cast<std::size_t>(n));
  arrays::quiesce();
}

TEST(Arrays, ABroadcastReachesEveryElementOnceAndAReductionCountsThemAll) {
  auto a = arrays::array<Counter>::create();
  constexpr int n = 33;
  if (me() == nodes() - 1)
    for (int i = 0; i < n; ++i) a.insert(i, i % nodes());
  arrays::quiesce();
  a.broadcast<&Counter::add>(std::int64_t{1});  // from every node
  arrays::quiesce();
  totals_seen = 0;
  if (me() == 0) a.broadcast<&Counter::report>();
  arrays::run_until([] { return totals_seen == 1; });
  EXPECT_EQ(last_total, static_cast<std::int64_t>(n) * nodes());
  arrays::quiesce();
}

TEST(Arrays, MessagesSentBeforeTheInsertWaitAtTheHome) {
  auto a = arrays::array<Counter>::create();
  a[7].call<&Counter::add>(std::int64_t{5});
  arrays::quiesce();  // held at 7's home
  if (me() == 0) a.insert(7, nodes() - 1);
  arrays::quiesce();
  std::vector<arrays::future<std::int64_t>> value;
  if (me() == 0) value.push_back(a[7].request<&Counter::value>());
  arrays::quiesce();
  if (me() == 0) {
    EXPECT_EQ(value[0].get(), 5 * nodes());
  }
}

// quiesce() runs the scheduler while the nodes count: a node that waits on a result from an
// element of a node already in quiesce() gets it, whenever its request arrives there.
TEST(Arrays, AResultComesFromANodeAlreadyInQuiesce) {
  auto a = arrays::array<Counter>::create();
  if (me() == 0)
    for (int i = 0; i < nodes(); ++i) a.insert(i, i);
  arrays::quiesce();
  // Node 0 asks every element, one at a time, after the others went into quiesce().
  if (me() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (int i = 0; i < nodes(); ++i) EXPECT_EQ(a[i].request<&Counter::where>().get(), i);
  }
  arrays::quiesce();
}

TEST(Arrays, MessagesFollowAnElementThatMigrates) {
  auto a = arrays::array<Counter>::create();
  if (me() == 0) a.insert(3);
  arrays::quiesce();
  for (int round = 0; round < 3 * nodes(); ++round) {
    if (me() == 0) a[3].call<&Counter::go>((round + 1) % nodes());
    a[3].call<&Counter::add>(std::int64_t{1});
    arrays::quiesce();
  }
  std::vector<arrays::future<std::int64_t>> value;
  std::vector<arrays::future<int>> where;
  if (me() == 0) {
    value.push_back(a[3].request<&Counter::value>());
    where.push_back(a[3].request<&Counter::where>());
  }
  arrays::quiesce();
  if (me() == 0) {
    EXPECT_EQ(value[0].get(), 3 * nodes() * nodes());
    EXPECT_EQ(where[0].get(), (3 * nodes()) % nodes());
  }
}

TEST(Arrays, AnArrivingElementIsToldAndReachesItsOwnArray) {
  auto a = arrays::array<Counter>::create();
  if (me() == 0) {
    a.insert(0, 0);
    a.insert(1, 0);
  }
  arrays::quiesce();
  if (me() == 0) a[1].call<&Counter::go_and_tell>(nodes() - 1);
  arrays::quiesce();
  std::vector<arrays::future<std::int64_t>> value;
  if (me() == 0) value.push_back(a[0].request<&Counter::value>());
  arrays::quiesce();
  if (me() == 0) {
    EXPECT_EQ(value[0].get(), nodes() > 1 ? 100 : 0);  // on one node nothing moves
  }
}

}  // namespace

namespace on_demand {

struct Tally : arrays::element<std::string> {
  int n = 0;
  void add(int k) { n += k; }
  int count() const { return n; }
  template <class A>
  void serialize(A& ar) {
    ar(n);
  }
};

}  // namespace on_demand

template <>
inline constexpr bool squall::arrays::creates_on_demand<&on_demand::Tally::add> = true;

namespace {

TEST(Arrays, AMethodDeclaredSoCreatesItsElementOnDemandAtItsHome) {
  auto a = arrays::array<on_demand::Tally>::create();
  for (const char* w : {"apple", "pear", "apple", "fig"}) a[w].call<&on_demand::Tally::add>(1);
  arrays::quiesce();
  EXPECT_EQ(squall::allreduce(a.local_count()), 3u);  // one element per word, made where its home is
  std::vector<arrays::future<int>> f;
  if (me() == 0)
    for (const char* w : {"apple", "pear", "fig"}) f.push_back(a[w].request<&on_demand::Tally::count>());
  arrays::quiesce();
  if (me() == 0) {
    EXPECT_EQ(f[0].get(), 2 * nodes());
    EXPECT_EQ(f[1].get(), nodes());
    EXPECT_EQ(f[2].get(), nodes());
  }
}

}  // namespace

namespace {

TEST(Arrays, RememberedLocationsUnusedSinceTheQuiescenceBeforeAreForgotten) {
  auto a = arrays::array<Counter>::create();
  constexpr int n = 24;
  if (me() == 0)
    for (int i = 0; i < n; ++i) a.insert(i, (i + 1) % nodes());  // mostly away from their homes
  arrays::quiesce();
  for (int i = 0; i < n; ++i) a[i].call<&Counter::add>(std::int64_t{1});  // caches where they are
  arrays::quiesce();
  const std::uint64_t before = arrays::counts().cache_expired;
  arrays::quiesce();  // unused since the last one: forgotten now
  const std::uint64_t forgotten = squall::allreduce(arrays::counts().cache_expired - before);
  if (nodes() > 1) {
    EXPECT_GT(forgotten, 0u);
  }
  // Messages still arrive, by the homes again.
  for (int i = 0; i < n; ++i) a[i].call<&Counter::add>(std::int64_t{1});
  arrays::quiesce();
  std::int64_t sum = 0;
  a.for_each_local([&](Counter& c) { sum += c.total; });
  EXPECT_EQ(squall::allreduce(sum), 2 * n * nodes());
}

// An adaptive array's indices come and go (a quadtree's cells): the home forgets its record
// of each deleted element at the quiescences after, and the index can be used again, its new
// element newer than anything a node remembers of the old one (the epoch floor).
TEST(Arrays, TheHomeForgetsDeletedElementsAndTheirIndicesCanBeUsedAgain) {
  auto a = arrays::array<Counter>::create();
  constexpr int n = 24;
  const auto generation = [&a](int on_shift) {
    if (me() == 0)
      for (int i = 0; i < n; ++i) a.insert(i, (i + on_shift) % nodes());
    arrays::quiesce();
    // Every node sends to every element, and each moves on once: caches and epochs everywhere.
    for (int i = 0; i < n; ++i) a[i].call<&Counter::add>(std::int64_t{1});
    if (me() == 0)
      for (int i = 0; i < n; ++i) a[i].call<&Counter::go>((i + on_shift + 1) % nodes());
    arrays::quiesce();
    for (int i = 0; i < n; ++i) a[i].call<&Counter::add>(std::int64_t{1});
    arrays::quiesce();
    std::int64_t sum = 0;
    a.for_each_local([&](Counter& c) { sum += c.total; });
    EXPECT_EQ(squall::allreduce(sum), 2 * n * nodes());
    if (me() == 0)
      for (int i = 0; i < n; ++i) a[i].destroy();
    arrays::quiesce();
    EXPECT_EQ(squall::allreduce(a.local_count()), 0u);
  };
  arrays::quiesce();
  arrays::quiesce();  // what the earlier tests' arrays leave to forget is forgotten by now
  const std::uint64_t before = arrays::counts().cache_expired;
  generation(0);
  arrays::quiesce();
  arrays::quiesce();  // unused since the one before: every entry of every node is forgotten
  const std::uint64_t forgotten = squall::allreduce(arrays::counts().cache_expired - before);
  // Each node had an entry for every index, and each was forgotten once, the homes'
  // tombstones among them (without those, n fewer).
  EXPECT_EQ(forgotten, static_cast<std::uint64_t>(n * nodes()));
  const std::uint64_t held_before = arrays::counts().held;
  generation(1);  // the same indices again, on other nodes
  // No message waited for an element that did not exist.
  EXPECT_EQ(squall::allreduce(arrays::counts().held - held_before), 0u);
}

// A sender's remembered location, once stale, is corrected by the routing update that the
// one forward sends back: the next message goes straight to the element. Element 5's home is
// node 1; it lives on node 2, then moves to node 1. (The sender uses its entry between every
// two quiescences, or the entry would be forgotten: RememberedLocationsUnusedSinceTheQuiescenceBeforeAreForgotten above.)
TEST(Arrays, AStaleLocationCostsOneForwardAndIsThenCorrected) {
  if (nodes() < 3) GTEST_SKIP() << "needs a sender, a home and a third node";
  auto a = arrays::array<Counter>::create(arrays::user_home([](const arrays::key&, int) { return 1; }));
  if (me() == 0) a.insert(5, 2);
  arrays::quiesce();
  if (me() == 0) a[5].call<&Counter::add>(std::int64_t{1});  // through the home: node 0 learns "node 2"
  arrays::quiesce();
  if (me() == 0) a[5].call<&Counter::go>(1);  // straight to node 2; the element moves home
  arrays::quiesce();
  const auto sum = [](std::uint64_t mine) { return squall::allreduce(mine); };
  const arrays::scheduler_counts before = arrays::counts();
  if (me() == 0) a[5].call<&Counter::add>(std::int64_t{1});  // to node 2, which forwards it
  arrays::quiesce();
  const arrays::scheduler_counts stale = arrays::counts();
  EXPECT_EQ(sum(stale.forwarded - before.forwarded), 1u);
  EXPECT_EQ(sum(stale.routing_updates - before.routing_updates), 1u);
  if (me() == 0) a[5].call<&Counter::add>(std::int64_t{1});  // straight to node 1
  arrays::quiesce();
  const arrays::scheduler_counts corrected = arrays::counts();
  EXPECT_EQ(sum(corrected.forwarded - stale.forwarded), 0u);
  EXPECT_EQ(sum(corrected.routing_updates - stale.routing_updates), 0u);
  std::vector<arrays::future<std::int64_t>> value;
  if (me() == 0) value.push_back(a[5].request<&Counter::value>());
  arrays::quiesce();
  if (me() == 0) {
    EXPECT_EQ(value[0].get(), 3);
  }
  a.destroy();
}

// A reduction's result delivered into the array: to every element (to_all), or to one
// (to_element), wherever they live.
struct Gatherer : arrays::element<arrays::index1d> {
  std::int64_t total = -1;
  int results = 0;
  void give(int to_all) {
    const std::int64_t mine = this_index()[0];
    auto self = arrays::array<Gatherer>::of(*this);
    contribute(mine, arrays::sum<std::int64_t>(), to_all ? self.to_all<&Gatherer::take>() : self.to_element<&Gatherer::take>(3));
  }
  void take(std::int64_t t) {
    total = t;
    ++results;
  }
  int got() const { return results; }
  template <class A>
  void serialize(A& ar) {
    ar(total, results);
  }
};

TEST(Arrays, AReductionsResultReachesEveryElementOrOne) {
  auto a = arrays::array<Gatherer>::create();
  constexpr int n = 21;
  if (me() == 0)
    for (int i = 0; i < n; ++i) a.insert(i, (i * 5) % nodes());
  arrays::quiesce();
  const std::int64_t expected = n * (n - 1) / 2;
  const auto check = [&](int (*results_of)(int)) {
    std::int64_t right = 0, results = 0, elements = 0;
    a.for_each_local([&](Gatherer& g) {
      ++elements;
      results += g.results;
      right += g.results == results_of(g.this_index()[0]) && g.total == expected;
    });
    EXPECT_EQ(squall::allreduce(elements), n);
    EXPECT_EQ(squall::allreduce(right), n) << "elements with the right results";
    return squall::allreduce(results);
  };
  if (me() == 0) a.broadcast<&Gatherer::give>(1);
  arrays::quiesce();
  EXPECT_EQ(check([](int) { return 1; }), n);
  if (me() == 0) a.broadcast<&Gatherer::give>(0);
  arrays::quiesce();
  EXPECT_EQ(check([](int i) { return i == 3 ? 2 : 1; }), n + 1);
  a.destroy();
}

}  // namespace

// Expedited entry methods (squall/arrays/entry.hpp): a relay round the nodes, one element per
// node, driven by run_until. Each hop sends the next element a message larger than a packet
// and then a small one, from a method that runs in the substrate's handler when its node
// waits: the large one must leave after the handler (it waits for its stream), and the small
// one after it.
namespace expedite {

std::int64_t smalls_here = 0;

struct Relay : arrays::element<arrays::index1d> {
  std::int32_t next_seq = 0;  // the sequence number of the next small message
  bool big_seen = false;      // its large one came first
  bool out_of_order = false;
  void big(std::int32_t seq, std::vector<std::int32_t> data) {
    const bool whole = data.size() == 20000 && std::all_of(data.begin(), data.end(), [seq](std::int32_t x) { return x == seq; });
    if (big_seen || !whole) out_of_order = true;
    big_seen = true;
  }
  void small(std::int32_t seq, std::int32_t last) {
    if (!big_seen) out_of_order = true;
    big_seen = false;
    next_seq = seq + squall::nodes();
    ++smalls_here;
    if (seq == last) return;
    const auto next = arrays::array<Relay>::of(*this)[(this_index()[0] + 1) % squall::nodes()];
    next.call<&Relay::big>(seq + 1, std::vector<std::int32_t>(20000, seq + 1));
    next.call<&Relay::small>(seq + 1, last);
  }
  void fail() { migrate_me(-5); }
  template <class A>
  void serialize(A& ar) {
    ar(next_seq, big_seen, out_of_order);
  }
};

}  // namespace expedite

template <>
inline constexpr bool squall::arrays::expedited<&expedite::Relay::big> = true;
template <>
inline constexpr bool squall::arrays::expedited<&expedite::Relay::small> = true;
template <>
inline constexpr bool squall::arrays::expedited<&expedite::Relay::fail> = true;

namespace {

// Element i's home is node i % nodes, and it lives there: a message goes straight to its
// node, so a node that has finished its part (and waits in quiesce) never holds one up.
arrays::home_map by_index() {
  return arrays::user_home([](const arrays::key& k, int n) { return arrays::index_of<arrays::index1d>(k)[0] % n; });
}

// Runs the relay for `laps` laps; returns how many of its messages ran in a handler here.
template <class Array>
std::uint64_t relay(const Array& a, int laps) {
  using expedite::Relay;
  if (me() == 0)
    for (int i = 0; i < nodes(); ++i) a.insert(i);
  arrays::quiesce();
  const std::uint64_t before = arrays::counts().expedited;
  expedite::smalls_here = 0;
  const std::int32_t last = laps * nodes();
  if (me() == 0) {
    a[0].template call<&Relay::big>(0, std::vector<std::int32_t>(20000, 0));
    a[0].template call<&Relay::small>(0, last);
  }
  // This node's element takes the sequence numbers me, me + nodes, ... up to `last`.
  const std::int64_t mine = (last - me()) / nodes() + 1;
  arrays::run_until([mine] { return expedite::smalls_here == mine; });
  arrays::quiesce();
  EXPECT_EQ(squall::allreduce(expedite::smalls_here), static_cast<std::int64_t>(last) + 1);
  bool wrong = false;
  a.for_each_local([&wrong](Relay& r) { wrong = wrong || r.out_of_order; });
  EXPECT_FALSE(wrong) << "a relay message came out of order, or incomplete";
  return arrays::counts().expedited - before;
}

TEST(Arrays, ExpeditedMethodsRunInTheHandlerAndTheirLargeSendsLeaveInOrder) {
  if (nodes() == 1) {
    EXPECT_EQ(relay(arrays::array<expedite::Relay>::create(by_index()), 10), 0u)
        << "a node's messages to itself are queued";
    return;
  }
  // A message runs in the handler only if it finds its node's program thread waiting with
  // nothing queued: on a loaded machine a whole relay of 5 nodes over TCP once found none so
  // (1 run of the probe's 453). Each relay checks the order again; a few are allowed.
  std::uint64_t ran = 0;
  for (int relays = 0; relays < 5 && ran == 0; ++relays)
    ran = squall::allreduce(relay(arrays::array<expedite::Relay>::create(by_index()), 10));
  EXPECT_GT(ran, 0u) << "no relay message ran in a handler in 5 relays";
}

TEST(Arrays, ExpeditedMethodsOfAnArrayInPlaceAreQueued) {
  const std::uint64_t ran =
      relay(arrays::array<expedite::Relay>::create_in_place({.slot_bytes = 4096, .slots_per_node = 16}, by_index()), 5);
  EXPECT_EQ(squall::allreduce(ran), 0u);
}

TEST(Arrays, WhatAnExpeditedMethodThrowsIsThrownByRunUntil) {
  if (nodes() < 2) GTEST_SKIP() << "needs a message from another node";
  auto a = arrays::array<expedite::Relay>::create(by_index());
  if (me() == 0) a.insert(1);  // on node 1, its home
  arrays::quiesce();
  if (me() == 0) a[1].call<&expedite::Relay::fail>();
  if (me() == 1) {
    std::string what;
    try {
      arrays::run_until([] { return false; });
    } catch (const squall::usage_error& e) {
      what = e.what();
    }
    EXPECT_NE(what.find("migrate_me"), std::string::npos) << what;
  }
  arrays::quiesce();
}

}  // namespace
