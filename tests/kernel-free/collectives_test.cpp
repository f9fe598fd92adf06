// SPDX-License-Identifier: BSD-3-Clause
// Collectives against the sequential answer, and fence with handlers that send further
// messages. Runs under squallrun -n 4 and -n 8.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <vector>

#include <squall/squall.hpp>

namespace am = squall::am;

namespace {

// ---- barrier: a node that has left barrier k tells every node so; the receiver must
// already have entered barrier k (no node leaves one before every node entered it).
std::atomic<int> entered_phase{-1};
std::atomic<int> left_too_early{0};
void on_left_phase(am::token&, std::int32_t phase) {
  if (entered_phase.load() < phase) left_too_early.fetch_add(1);
}

TEST(Collectives, BarrierOrdersPhases) {
  const int n = squall::nodes(), me = squall::node();
  squall::barrier();
  for (int phase = 0; phase < 50; ++phase) {
    if (phase % n == me) {
      // This phase's laggard: handles messages for 2 ms before entering, so that a "left"
      // message sent by a node that did not wait for it would be seen now.
      const std::int64_t until = am::clock_ns() + 2'000'000;
      while (am::clock_ns() < until) am::poll();
    }
    entered_phase.store(phase);
    squall::barrier();
    for (int d = 0; d < n; ++d) am::send<on_left_phase>(d, std::int32_t{phase});
    am::flush();
  }
  squall::fence();  // every "left" message handled
  EXPECT_EQ(squall::allreduce(left_too_early.load()), 0);
}

TEST(Collectives, BroadcastFromEveryRoot) {
  const int n = squall::nodes(), me = squall::node();
  for (int root = 0; root < n; ++root) {
    std::vector<std::int64_t> v(1000, me == root ? -1 : 0);
    if (me == root) {
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int64_t>(i * 3 + root);
    }
    squall::broadcast(std::span<std::int64_t>(v), root);
    for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], static_cast<std::int64_t>(i * 3 + root));
  }
}

TEST(Collectives, LargeBroadcastGoesThroughBulk) {
  const int me = squall::node();
  std::vector<std::uint32_t> v(2'000'000, 0);  // 8 MB: far above one message
  if (me == 0) {
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint32_t>(i ^ 0x5a5a);
  }
  squall::broadcast(std::span<std::uint32_t>(v), 0);
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], static_cast<std::uint32_t>(i ^ 0x5a5a));
}

TEST(Collectives, ReduceAndAllreduceBuiltins) {
  const int n = squall::nodes(), me = squall::node();
  const std::array<std::int64_t, 3> in{me + 1, -me, me * me};
  std::array<std::int64_t, 3> sum{}, mn{}, mx{};
  squall::allreduce(std::span<const std::int64_t>(in), std::span<std::int64_t>(sum), squall::op::sum{});
  squall::allreduce(std::span<const std::int64_t>(in), std::span<std::int64_t>(mn), squall::op::min{});
  squall::allreduce(std::span<const std::int64_t>(in), std::span<std::int64_t>(mx), squall::op::max{});
  std::int64_t s0 = 0, s1 = 0, s2 = 0;
  for (int i = 0; i < n; ++i) {
    s0 += i + 1;
    s1 -= i;
    s2 += i * i;
  }
  EXPECT_EQ(sum, (std::array<std::int64_t, 3>{s0, s1, s2}));
  EXPECT_EQ(mn, (std::array<std::int64_t, 3>{1, -(n - 1), 0}));
  EXPECT_EQ(mx, (std::array<std::int64_t, 3>{n, 0, (n - 1) * (n - 1)}));

  EXPECT_DOUBLE_EQ(squall::allreduce(0.5 * me, squall::op::max{}), 0.5 * (n - 1));
  EXPECT_EQ(squall::allreduce(static_cast<float>(me), squall::op::min{}), 0.0f);

  for (int root = 0; root < n; ++root) {
    std::uint32_t out = 12345;
    const std::uint32_t mine = 1u << me % 32;
    squall::reduce(std::span<const std::uint32_t>(&mine, 1), std::span<std::uint32_t>(&out, 1),
                   squall::op::sum{}, root);
    std::uint32_t expect = 0;
    for (int i = 0; i < n; ++i) expect += 1u << i % 32;
    EXPECT_EQ(out, me == root ? expect : 12345u);
  }
}

// An output smaller than the input is refused on every node that writes it (before, the
// result was copied past its end).
TEST(Collectives, OutputSmallerThanInputIsRefused) {
  const std::array<std::int64_t, 4> in{1, 2, 3, 4};
  std::array<std::int64_t, 1> out{};
  EXPECT_THROW(squall::allreduce(std::span<const std::int64_t>(in), std::span<std::int64_t>(out)), squall::usage_error);
  if (squall::node() == 0) {
    EXPECT_THROW(squall::reduce(std::span<const std::int64_t>(in), std::span<std::int64_t>(out)), squall::usage_error);
  }
  squall::barrier();  // the refusals took no collective's place: the nodes are still in step
}

// A non-commutative user operator: 2x2 integer matrix product, combined in node order.
struct mat {
  std::int64_t a, b, c, d;
  bool operator==(const mat&) const = default;
};
mat node_matrix(int i) { return {1, i + 1, 0, 1 + (i % 2)}; }

TEST(Collectives, UserOperatorIsCombinedInNodeOrder) {
  const int n = squall::nodes(), me = squall::node();
  auto product = [](const mat& x, const mat& y) {
    return mat{x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c, x.c * y.b + x.d * y.d};
  };
  mat expect = node_matrix(0);
  for (int i = 1; i < n; ++i) expect = product(expect, node_matrix(i));
  EXPECT_EQ(squall::allreduce(node_matrix(me), product), expect);
  for (int root : {0, n - 1}) {
    mat out{};
    const mat mine = node_matrix(me);
    squall::reduce(std::span<const mat>(&mine, 1), std::span<mat>(&out, 1), product, root);
    if (me == root) {
      EXPECT_EQ(out, expect);
    }
  }
}

// ---- fence: a message hops from node to node `hops` times before it stops. Every hop is
// sent by a handler, so only termination detection can know when the last one ran.
std::int64_t hops_done = 0;
void on_hop(am::token&, std::int32_t remaining, std::int32_t stride) {
  ++hops_done;
  if (remaining > 0) {
    const int n = squall::nodes();
    am::send<on_hop>((squall::node() + stride) % n, remaining - 1, stride);
  }
}

TEST(Fence, WaitsForMessagesSentByHandlers) {
  const int n = squall::nodes(), me = squall::node();
  for (unsigned factor : {1u, 64u}) {
    am::set_aggregation(factor);
    hops_done = 0;
    squall::barrier();
    constexpr int chains = 20, hops = 50;
    for (int c = 0; c < chains; ++c) am::send<on_hop>((me + c) % n, std::int32_t{hops}, std::int32_t{c % n + 1});
    squall::fence();
    const std::int64_t total = squall::allreduce(hops_done);
    EXPECT_EQ(total, std::int64_t{n} * chains * (hops + 1)) << "aggregation " << factor;
    squall::barrier();
  }
  am::set_aggregation(1);
}

// With nothing in flight a fence takes exactly two waves (the second confirms the first's
// totals), each a reduction to node 0 and a broadcast back (2 (n - 1) messages in the job),
// and sends no message of its own beyond them.
TEST(Fence, ReturnsAtOnceWhenNothingIsInFlight) {
  const int n = squall::nodes();
  constexpr int fences = 20;
  squall::fence();
  const auto before = squall::stats::take();
  for (int i = 0; i < fences; ++i) squall::fence();
  const auto after = squall::stats::take();
  std::uint64_t collective = 0, other = 0;
  for (const auto& h : after.handlers) {
    const std::uint64_t sent = h.sent - before.handler(h.name).sent;
    (h.name == "squall.collective" ? collective : other) += sent;
  }
  EXPECT_EQ(other, 0u);
  EXPECT_EQ(squall::allreduce(collective), std::uint64_t{fences} * 2 * 2 * static_cast<std::uint64_t>(n - 1));
}

// ---- allreduce_sum: split phases. Between its steps a node serves its peers itself (here: a
// round trip node 0 waits on from every other node, answered only by the peer's program
// thread), as libarrays' quiesce runs its scheduler; a blocking sum would hang this.
std::atomic<int> questions{0};
std::atomic<int> answers{0};
void on_answer(am::token&) { answers.fetch_add(1); }
void on_question(am::token&) { questions.fetch_add(1); }

TEST(AllreduceSum, SumsWhileTheNodesServeEachOther) {
  const int n = squall::nodes(), me = squall::node();
  for (int round = 0; round < 3; ++round) {
    questions = 0;
    answers = 0;
    squall::barrier();
    if (me == 0) {
      // Node 0 asks before it joins the sum; the others are in it by then, or soon.
      for (int peer = 1; peer < n; ++peer) am::send<on_question>(peer);
      am::flush();
      am::wait_until([n] { return answers.load() == n - 1; });
    }
    const std::array<std::uint64_t, 3> mine{1, static_cast<std::uint64_t>(me), std::uint64_t{1} << (me % 64)};
    squall::allreduce_sum sum{std::span<const std::uint64_t>(mine)};
    bool answered = false;
    while (!sum.progress()) {
      if (me != 0 && !answered && questions.load() == 1) {
        am::send<on_answer>(0);
        am::flush(0);
        answered = true;
      }
      am::wait_until([&] { return sum.ready() || (!answered && me != 0 && questions.load() == 1); });
    }
    const auto all = sum.result();
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0], static_cast<std::uint64_t>(n));
    EXPECT_EQ(all[1], static_cast<std::uint64_t>(n) * (n - 1) / 2);
    std::uint64_t bits = 0;
    for (int i = 0; i < n; ++i) bits += std::uint64_t{1} << (i % 64);
    EXPECT_EQ(all[2], bits);
    EXPECT_TRUE(sum.ready());
    EXPECT_TRUE(sum.progress());
  }
  // It is a collective like the others, in the same sequence.
  EXPECT_EQ(squall::allreduce(1), n);
}

}  // namespace
