// SPDX-License-Identifier: BSD-3-Clause
// The executor's counters: exactly one message per communicating pair and execution (also
// when a pair's data needs a bulk transfer), "chaos.executions" one per call, and
// "chaos.elements" the elements this node sends.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
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

pattern mixed(std::uint64_t seed) { return inspect_mixed(size, count, seed); }

struct counts {
  std::uint64_t messages, executions, elements;
};

// Counter growth on this node over `phase`, after barriers (see growth()).
template <class F>
counts measure(F phase) {
  squall::barrier();
  const auto before = squall::stats::take();
  phase();
  squall::barrier();
  const auto after = squall::stats::take();
  auto d = [&](const char* name) { return after.get(name) - before.get(name); };
  return {d("chaos.messages"), d("chaos.executions"), d("chaos.elements")};
}

TEST(Messages, GatherSendsOneMessagePerPeer) {
  const auto c = mixed(81);
  const auto f = c.s.figures();
  const auto truth = gather_truth(c.d, me(), [&](int p) { return references(c.d, p, count, refs::mixed, 81); });
  EXPECT_TRUE(figures_match(f, truth));
  auto data = owned_values(c.d, me(), c.s.ghost_end());
  const auto n = measure([&] { chaos::gather(c.s, std::span<std::int64_t>(data)); });
  EXPECT_EQ(n.messages, static_cast<std::uint64_t>(f.peers_sent_to));
  EXPECT_EQ(n.executions, 1u);
  EXPECT_EQ(n.elements, static_cast<std::uint64_t>(f.elements_sent));
  EXPECT_TRUE(reads_right_values(data, c.localized, c.original));
}

TEST(Messages, SplitPhaseGatherCountsTheSame) {
  const auto c = mixed(82);
  const auto f = c.s.figures();
  auto data = owned_values(c.d, me(), c.s.ghost_end());
  const auto n = measure([&] { chaos::gather_begin(c.s, std::span<std::int64_t>(data)).end(); });
  EXPECT_EQ(n.messages, static_cast<std::uint64_t>(f.peers_sent_to));
  EXPECT_EQ(n.executions, 1u);
}

TEST(Messages, ScatterSendsOneMessagePerPeerItGathersFrom) {
  const auto c = mixed(83);
  const auto f = c.s.figures();
  auto data = owned_values(c.d, me(), c.s.ghost_end());
  const auto scatter = measure([&] { chaos::scatter(c.s, std::span<std::int64_t>(data)); });
  EXPECT_EQ(scatter.messages, static_cast<std::uint64_t>(f.peers_received_from));
  EXPECT_EQ(scatter.executions, 1u);
  EXPECT_EQ(scatter.elements, static_cast<std::uint64_t>(f.elements_received));

  const auto op = measure([&] { chaos::scatter_op(c.s, std::span<std::int64_t>(data), chaos::combine::max{}); });
  EXPECT_EQ(op.messages, static_cast<std::uint64_t>(f.peers_received_from));
  EXPECT_EQ(op.executions, 1u);
  EXPECT_EQ(op.elements, static_cast<std::uint64_t>(f.elements_received));
}

// 1 KiB elements: a pair's data is far above one message and goes as a bulk transfer.
struct big {
  std::array<double, 128> v;
};

TEST(Messages, LargeDataStillOneMessagePerPeer) {
  const auto c = mixed(84);
  const auto f = c.s.figures();
  const auto mine = c.d.owned_by(me());
  std::vector<big> data(static_cast<std::size_t>(c.s.ghost_end()));
  for (std::size_t k = 0; k < data.size(); ++k) {
    data[k].v.fill(k < mine.size() ? static_cast<double>(value_of(mine[k])) : -1.0);
  }
  const auto gather = measure([&] { chaos::gather(c.s, std::span<big>(data)); });
  EXPECT_EQ(gather.messages, static_cast<std::uint64_t>(f.peers_sent_to));
  EXPECT_TRUE(every(c.original.size(), [&](std::size_t i) -> std::string {
    const big& b = data[static_cast<std::size_t>(c.localized[i])];
    const auto want = static_cast<double>(value_of(c.original[i]));
    for (double x : b.v) {
      if (x != want) {
        return "[" + std::to_string(i) + "] element " + std::to_string(c.original[i]) + " holds " + std::to_string(x);
      }
    }
    return {};
  }));

  const auto scatter = measure([&] { chaos::scatter(c.s, std::span<big>(data)); });
  EXPECT_EQ(scatter.messages, static_cast<std::uint64_t>(f.peers_received_from));
}

}  // namespace
