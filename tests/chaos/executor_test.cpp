// SPDX-License-Identifier: BSD-3-Clause
// The executor against the sequential truth: gather, scatter (ghost values overwrite their
// owners), scatter_op with add, min, max and a non-commutative user function (ghosts combined
// in node order), and elements of several components.
#include <gtest/gtest.h>

#include <chrono>
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

namespace {

using squall::chaos::index;  // not ::index from <strings.h>

constexpr index size = 2000;
constexpr std::size_t count = 2500;

using pattern = inspected;

template <class F>
pattern build(std::uint64_t seed, F refs_of) {
  return inspect_pattern(size, seed, refs_of);
}

pattern mixed(std::uint64_t seed) { return inspect_mixed(size, count, seed); }

// For each element this node owns: the other nodes that reference it, ascending.
template <class F>
std::vector<std::vector<int>> remote_referencers(const distribution& d, F refs_of) {
  std::vector<std::vector<int>> who(d.owned_by(me()).size());
  for (int p = 0; p < nodes(); ++p) {
    if (p == me()) continue;
    const auto r = refs_of(d, p);
    for (index g : std::set<index>(r.begin(), r.end())) {
      if (d.owner_of(g) == me()) who[static_cast<std::size_t>(d.offset_of(g))].push_back(p);
    }
  }
  return who;
}

// The ghost value node p writes for element g in the scatter tests.
std::int64_t written(index g, int p) { return -(g * 16 + p) - 1; }

// Sets this node's ghost slots to written(g, me()).
void write_ghosts(std::vector<std::int64_t>& data, const pattern& c) {
  for (std::size_t i = 0; i < c.original.size(); ++i) {
    if (c.d.owner_of(c.original[i]) != me()) {
      data[static_cast<std::size_t>(c.localized[i])] = written(c.original[i], me());
    }
  }
}

TEST(Executor, GatherAgainAfterOwnersChange) {
  const auto c = mixed(51);
  auto data = owned_values(c.d, me(), c.s.ghost_end());
  for (std::int64_t round = 0; round < 3; ++round) {
    const auto mine = c.d.owned_by(me());
    for (std::size_t k = 0; k < mine.size(); ++k) data[k] = value_of(mine[k]) + round * 1'000'000'000;
    chaos::gather(c.s, std::span<std::int64_t>(data));
    EXPECT_TRUE(every(c.original.size(), [&](std::size_t i) {
      const auto got = data[static_cast<std::size_t>(c.localized[i])];
      return describe(i, got, value_of(c.original[i]) + round * 1'000'000'000);
    })) << "round " << round;
  }
}

TEST(Executor, GatherLeavesTheRestOfALargerArray) {
  const auto c = mixed(52);
  auto data = owned_values(c.d, me(), c.s.ghost_end() + 100, -7);
  chaos::gather(c.s, std::span<std::int64_t>(data));
  EXPECT_TRUE(reads_right_values(data, c.localized, c.original));
  EXPECT_TRUE(every(100, [&](std::size_t k) {
    const auto slot = static_cast<std::size_t>(c.s.ghost_end()) + k;
    return describe(slot, data[slot], -7);
  }));
}

TEST(Executor, ScatterWithOneWriterPerElement) {
  // Node p references only elements whose designated writer is p, so no element has two
  // remote writers.
  auto writer = [](index g) { return static_cast<int>((g * 2654435761u) % static_cast<index>(nodes())); };
  auto refs_of = [&](const distribution& d, int p) {
    std::vector<index> r;
    for (index g : references(d, p, count, refs::mixed, 53)) {
      if (writer(g) == p) r.push_back(g);
    }
    return r;
  };
  const auto c = build(53, refs_of);
  const auto who = remote_referencers(c.d, refs_of);
  auto data = owned_values(c.d, me(), c.s.ghost_end());
  write_ghosts(data, c);
  chaos::scatter(c.s, std::span<std::int64_t>(data));
  const auto mine = c.d.owned_by(me());
  EXPECT_TRUE(every(mine.size(), [&](std::size_t k) {
    const index g = mine[k];
    return describe(k, data[k], who[k].empty() ? value_of(g) : written(g, who[k].front()));
  }));
}

TEST(Executor, ScatterWithSeveralWriters) {
  // Which of several writers wins is not specified: any of them.
  auto refs_of = [](const distribution& d, int p) { return references(d, p, count, refs::mixed, 54); };
  const auto c = build(54, refs_of);
  const auto who = remote_referencers(c.d, refs_of);
  auto data = owned_values(c.d, me(), c.s.ghost_end());
  write_ghosts(data, c);
  chaos::scatter(c.s, std::span<std::int64_t>(data));
  const auto mine = c.d.owned_by(me());
  EXPECT_TRUE(every(mine.size(), [&](std::size_t k) -> std::string {
    const index g = mine[k];
    if (who[k].empty()) return describe(k, data[k], value_of(g));
    for (int p : who[k]) {
      if (data[k] == written(g, p)) return {};
    }
    return "element " + std::to_string(g) + " holds " + std::to_string(data[k]) + ", written by none of its " +
           std::to_string(who[k].size()) + " remote referencers";
  }));
}

// scatter_op on this node's part, against the owner value combined with every other
// referencing node's contribution in node order. Ghost slots must be left as they were.
template <class T, class Op, class Contribution>
void check_scatter_op(std::uint64_t seed, Op op, Contribution contribution) {
  auto refs_of = [seed](const distribution& d, int p) { return references(d, p, count, refs::mixed, seed); };
  const auto c = build(seed, refs_of);
  const auto who = remote_referencers(c.d, refs_of);
  const auto mine = c.d.owned_by(me());
  std::vector<T> data(static_cast<std::size_t>(c.s.ghost_end()));
  for (std::size_t k = 0; k < mine.size(); ++k) data[k] = static_cast<T>(value_of(mine[k]));
  for (std::size_t i = 0; i < c.original.size(); ++i) {
    if (c.d.owner_of(c.original[i]) != me()) {
      data[static_cast<std::size_t>(c.localized[i])] = contribution(c.original[i], me());
    }
  }
  const std::vector<T> ghosts_before(data.begin() + static_cast<std::ptrdiff_t>(mine.size()), data.end());

  chaos::scatter_op(c.s, std::span<T>(data), op);

  EXPECT_TRUE(every(mine.size(), [&](std::size_t k) {
    T want = static_cast<T>(value_of(mine[k]));
    for (int p : who[k]) want = op(want, contribution(mine[k], p));
    return describe(k, static_cast<long long>(data[k]), static_cast<long long>(want));
  }));
  EXPECT_TRUE(every(ghosts_before.size(), [&](std::size_t k) {
    const std::size_t slot = mine.size() + k;
    return describe(slot, static_cast<long long>(data[slot]), static_cast<long long>(ghosts_before[k]));
  })) << "ghost slots";
}

std::int64_t signed_contribution(index g, int p) { return (g * 31 + p * 7919) % 100000 - 50000; }
std::int64_t near_owner(index g, int p) { return value_of(g) + signed_contribution(g, p); }

TEST(Executor, ScatterOpAdd) { check_scatter_op<std::int64_t>(55, chaos::combine::add{}, signed_contribution); }
TEST(Executor, ScatterOpMin) {
  // Contributions below and above the owners' values both occur.
  check_scatter_op<std::int64_t>(56, chaos::combine::min{}, near_owner);
}
TEST(Executor, ScatterOpMax) {
  check_scatter_op<std::int64_t>(57, chaos::combine::max{}, near_owner);
}
TEST(Executor, ScatterOpDefaultIsAdd) {
  auto refs_of = [](const distribution& d, int p) { return references(d, p, count, refs::mixed, 58); };
  const auto c = build(58, refs_of);
  const auto who = remote_referencers(c.d, refs_of);
  std::vector<std::int64_t> data(static_cast<std::size_t>(c.s.ghost_end()), 1);
  chaos::scatter_op(c.s, std::span<std::int64_t>(data));
  EXPECT_TRUE(every(who.size(), [&](std::size_t k) {
    return describe(k, data[k], 1 + static_cast<std::int64_t>(who[k].size()));
  }));
}
TEST(Executor, ScatterOpUserFunctionInNodeOrder) {
  // Not commutative: only node order gives the expected value.
  check_scatter_op<std::uint64_t>(
      59, [](std::uint64_t a, std::uint64_t b) { return a * 1000003u + b; },
      [](index g, int p) { return static_cast<std::uint64_t>(g * 10 + p + 1); });
}

TEST(Executor, ScatterOpInNodeOrderBackToBack) {
  // Many executions without a barrier between them: fast nodes' messages often arrive before
  // the execution has begun here, and must still be combined in node order.
  auto refs_of = [](const distribution& d, int p) { return references(d, p, 2000, refs::mixed, 61); };
  const auto c = build(61, refs_of);
  const auto who = remote_referencers(c.d, refs_of);
  const auto mine = c.d.owned_by(me());
  auto op = [](std::uint64_t a, std::uint64_t b) { return a * 1000003u + b; };
  std::vector<std::uint64_t> data(static_cast<std::size_t>(c.s.ghost_end()));
  std::size_t wrong_rounds = 0;
  rng jitter(static_cast<std::uint64_t>(me()) + 1);
  for (std::uint64_t round = 0; round < 500; ++round) {
    auto ghost = [round](int p) { return round * 7 + static_cast<std::uint64_t>(p) + 1; };
    for (std::size_t k = 0; k < data.size(); ++k) data[k] = k < mine.size() ? round : ghost(me());
    // A random delay on each node before it begins, so that some messages arrive before
    // the execution has begun and others while it begins.
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(jitter.below(40));
    while (std::chrono::steady_clock::now() < until) {
    }
    chaos::scatter_op(c.s, std::span<std::uint64_t>(data), op);
    for (std::size_t k = 0; k < mine.size(); ++k) {
      std::uint64_t want = round;
      for (int p : who[k]) want = op(want, ghost(p));
      if (data[k] != want) {
        if (wrong_rounds++ == 0) {
          ADD_FAILURE() << "round " << round << ": element " << mine[k] << " is " << data[k] << ", expected " << want;
        }
        break;
      }
    }
  }
  EXPECT_EQ(wrong_rounds, 0u);
}

struct vec3 {
  double x, y, z;
};

TEST(Executor, ElementsOfThreeComponents) {
  const auto c = mixed(60);
  auto owned_vec = [](index g) {
    const auto x = static_cast<double>(g);
    return vec3{x, 2.0 * x, -0.5 * x};
  };
  const auto mine = c.d.owned_by(me());
  std::vector<vec3> data(static_cast<std::size_t>(c.s.ghost_end()), vec3{-1, -1, -1});
  for (std::size_t k = 0; k < mine.size(); ++k) data[k] = owned_vec(mine[k]);

  chaos::gather(c.s, std::span<vec3>(data));
  EXPECT_TRUE(every(c.original.size(), [&](std::size_t i) -> std::string {
    const vec3 got = data[static_cast<std::size_t>(c.localized[i])], want = owned_vec(c.original[i]);
    if (got.x == want.x && got.y == want.y && got.z == want.z) return {};
    return "[" + std::to_string(i) + "] element " + std::to_string(c.original[i]) + " reads (" + std::to_string(got.x) +
           ", " + std::to_string(got.y) + ", " + std::to_string(got.z) + ")";
  }));

  // Each ghost adds (1, node, element % 7) to its owner: exact in doubles, in any order.
  auto refs_of = [](const distribution& d, int p) { return references(d, p, count, refs::mixed, 60); };
  const auto who = remote_referencers(c.d, refs_of);
  for (std::size_t k = 0; k < mine.size(); ++k) data[k] = vec3{0, 0, 0};
  for (std::size_t i = 0; i < c.original.size(); ++i) {
    if (c.d.owner_of(c.original[i]) != me()) {
      const auto slot = static_cast<std::size_t>(c.localized[i]);
      data[slot] = vec3{1, static_cast<double>(me()), static_cast<double>(c.original[i] % 7)};
    }
  }
  auto add3 = [](const vec3& a, const vec3& b) { return vec3{a.x + b.x, a.y + b.y, a.z + b.z}; };
  chaos::scatter_op(c.s, std::span<vec3>(data), add3);
  EXPECT_TRUE(every(mine.size(), [&](std::size_t k) -> std::string {
    vec3 want{0, 0, 0};
    for (int p : who[k]) want = vec3{want.x + 1, want.y + p, want.z + static_cast<double>(mine[k] % 7)};
    if (data[k].x == want.x && data[k].y == want.y && data[k].z == want.z) return {};
    return "element " + std::to_string(mine[k]) + " is (" + std::to_string(data[k].x) + ", " +
           std::to_string(data[k].y) + ", " + std::to_string(data[k].z) + "), expected (" + std::to_string(want.x) +
           ", " + std::to_string(want.y) + ", " + std::to_string(want.z) + ")";
  }));
}

}  // namespace
