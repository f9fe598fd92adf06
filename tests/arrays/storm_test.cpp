// SPDX-License-Identifier: BSD-3-Clause
// Exactly-once under an adversarial storm (issue 20): elements migrate at random while every
// element messages random others; transient elements are inserted and sent to at once (their
// first messages reach the home before the insertion does, and wait there), then delete
// themselves after their last message (inserted by another element, so that their first
// messages often reach the home before the insertion and wait there); broadcasts and reductions run in the middle of it.
//
// Every message carries a pseudo-random id. Each node sums, over what it delivered, the
// count, the ids and the ids' squares; the job's sums must equal what was sent, so a lost
// message cannot hide behind a duplicate. Broadcasts: every stayer sees each one exactly once.
// Reductions: one taken mid-storm counts every element that the broadcast reached, once.
#include <gtest/gtest.h>

#include <squall/arrays.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>
#include <squall/stats.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace arrays = squall::arrays;

namespace {

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

int me() { return squall::node(); }
int nodes() { return squall::nodes(); }

// What this node delivered, and what its elements sent beyond the program's own messages.
struct tally {
  std::uint64_t count = 0, sum = 0, squares = 0;
  std::uint64_t spawned = 0;  // transient elements inserted here
  void add(std::uint64_t id) {
    ++count;
    sum += id;
    squares += id * id;
  }
};
tally delivered, expected;

constexpr int stayers_per_node = 16;
constexpr int transient_messages = 3;
constexpr std::int32_t transient_base = 1 << 20;

int stayers() { return stayers_per_node * nodes(); }

struct Storm;
arrays::array<Storm, arrays::index1d>* storm = nullptr;  // I given: Storm is incomplete here

// Every element, stayer or transient.
struct Storm : arrays::element<arrays::index1d> {
  int received = 0;
  int ticks = 0;
  std::vector<std::uint64_t> trail;  // migrates with the element: exercises packing

  // A chain: delivered here, then `ttl` more hops to random stayers.
  void hit(std::uint64_t id, int ttl) {
    delivered.add(id);
    ++received;
    trail.push_back(id);
    if (trail.size() > 8) trail.erase(trail.begin());
    const std::uint64_t r = mix(id);
    if (ttl > 0) {
      const std::uint64_t next = mix(id ^ 0x5bd1e995);
      expected.add(next);
      (*storm)[static_cast<std::int32_t>(r % stayers())].call<&Storm::hit>(next, ttl - 1);
    }
    if (r % 5 == 0) migrate_me(static_cast<int>((r >> 8) % nodes()));
    if (r % 11 == 0 && this_index()[0] < transient_base) spawn(r);
  }
  // A transient: inserted on a random node and sent its messages at once.
  void spawn(std::uint64_t r) {
    if (++spawns_ > 1000) return;
    const std::int32_t t = transient_base + (squall::node() << 12) + spawns_;  // never reused
    ++delivered.spawned;
    // Another stayer inserts it, so its messages, sent from here at once, often reach its
    // home before the insertion does (and wait there).
    (*storm)[static_cast<std::int32_t>((r >> 24) % stayers())].call<&Storm::insert_for>(t, static_cast<int>((r >> 16) % nodes()));
    for (int j = 0; j < transient_messages; ++j) {
      const std::uint64_t id = mix(r + static_cast<std::uint64_t>(j) + 1);
      expected.add(id);
      (*storm)[t].call<&Storm::last>(id);
    }
  }
  void insert_for(std::int32_t t, int on) { storm->insert(t, on); }
  void last(std::uint64_t id) {
    delivered.add(id);
    if (++received == transient_messages) destroy_me();
    else if (mix(id) % 2 == 0) migrate_me(static_cast<int>(mix(id) % nodes()));
  }
  void tick() { ++ticks; }
  void count_me() {
    ++count_me_calls;
    contribute(1, arrays::sum<int>(), arrays::on_every_node<&Storm::counted>());
  }
  // Every element's count of ticks, so that a broadcast delivered twice shows as well as a lost one.
  void report_ticks() { contribute(std::vector<int>{ticks}, arrays::concat<int>(), arrays::on_every_node<&Storm::all_ticks>()); }
  static void counted(const int& n) { last_count = n; ++results; }
  static void all_ticks(const std::vector<int>& t) {
    ticks_seen = t;
    ++results;
  }

  template <class A>
  void serialize(A& ar) {
    ar(received, ticks, trail);
  }

  static inline int last_count = -1, results = 0;
  static inline std::vector<int> ticks_seen;
  static inline int spawns_ = 0;
  static inline int count_me_calls = 0;  // on this node, this round
};

TEST(ArraysStorm, EveryMessageBroadcastAndContributionArrivesExactlyOnce) {
  auto a = arrays::array<Storm>::create();
  storm = &a;
  delivered = {};
  expected = {};
  for (int i = me(); i < stayers(); i += nodes()) a.insert(i, static_cast<int>(mix(i) % nodes()));
  arrays::quiesce();

  constexpr int rounds = 4, per_node = 64, ttl = 6;
  int broadcasts = 0;
  for (int round = 0; round < rounds; ++round) {
    Storm::results = 0;
    Storm::count_me_calls = 0;
    if (me() == 0) a.broadcast<&Storm::tick>();
    for (int i = 0; i < per_node; ++i) {
      const std::uint64_t id = mix((static_cast<std::uint64_t>(round) << 40) | (static_cast<std::uint64_t>(me()) << 20) | i);
      expected.add(id);
      a[static_cast<std::int32_t>(id % stayers())].call<&Storm::hit>(id, ttl);
    }
    // Mid-storm: count the stayers while they migrate, and a second broadcast.
    if (me() == 0) a.broadcast<&Storm::count_me>();
    if (me() == 0) a.broadcast<&Storm::tick>();
    broadcasts += 2;
    arrays::run_until([] { return Storm::results >= 1; });
    arrays::quiesce();
    // Every element alive when the broadcast reached it contributed once: the stayers, and
    // the transients alive then (some deleted before their node's part was sent).
    EXPECT_EQ(Storm::last_count, squall::allreduce(Storm::count_me_calls)) << "round " << round;
    EXPECT_GE(Storm::last_count, stayers()) << "round " << round;
  }
  if (me() == 0) a.broadcast<&Storm::report_ticks>();
  arrays::run_until([] { return Storm::results >= 2; });
  EXPECT_EQ(Storm::ticks_seen.size(), static_cast<std::size_t>(stayers()));
  EXPECT_EQ(std::count(Storm::ticks_seen.begin(), Storm::ticks_seen.end(), broadcasts), stayers())
      << "stayers that saw each broadcast exactly once";
  arrays::quiesce();

  const std::vector<std::uint64_t> mine{delivered.count, delivered.sum, delivered.squares,
                                        expected.count,  expected.sum,  expected.squares};
  std::vector<std::uint64_t> all(mine.size());
  squall::allreduce(std::span<const std::uint64_t>(mine), std::span<std::uint64_t>(all));
  EXPECT_EQ(all[0], all[3]) << "messages delivered vs sent";
  EXPECT_EQ(all[1], all[4]) << "sum of ids delivered vs sent";
  EXPECT_EQ(all[2], all[5]) << "sum of squared ids delivered vs sent";
  const std::uint64_t spawned = squall::allreduce(delivered.spawned);
  EXPECT_GT(spawned, 0u) << "the storm inserted no transient element";
  const arrays::scheduler_counts c = arrays::counts();
  const std::uint64_t migrations = squall::allreduce(c.migrations_out);
  const std::uint64_t forwarded = squall::allreduce(c.forwarded);
  const std::uint64_t held = squall::allreduce(c.held);
  if (nodes() > 1) {
    EXPECT_GT(held, 0u) << "no message reached a home before its element's insertion";
    EXPECT_GT(migrations, 0u);
    EXPECT_GT(forwarded, 0u) << "no message met a stale location";
  }
  // Nothing was ever held at a quiescence: every insertion reached its home in time.
  EXPECT_EQ(squall::allreduce(squall::stats::take().get("arrays.held_at_quiescence")), 0u);
  // Every transient deleted itself: only the stayers are left.
  EXPECT_EQ(squall::allreduce(a.local_count()), static_cast<std::size_t>(stayers()));
  storm = nullptr;
}

}  // namespace
