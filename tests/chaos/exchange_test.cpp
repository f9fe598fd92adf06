// SPDX-License-Identifier: BSD-3-Clause
// exchange and allgather, the collectives the set-up phases are built on: contents against
// the buffers every node can compute for every other, one message per non-empty buffer, and
// many exchanges back to back (a fast node's next exchange arriving early).
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include <squall/am.hpp>
#include <squall/chaos/exchange.hpp>

#include "reference.hpp"

namespace chaos = squall::chaos;
using namespace chaos_test;

namespace {

using squall::chaos::index;  // not ::index from <strings.h>

// What node `from` sends node `to` in round `round`: a random length (often zero), bytes
// that name the sender, the receiver and the position.
std::vector<std::byte> buffer(int from, int to, int round, std::size_t max_len) {
  rng r(static_cast<std::uint64_t>(round * 7777 + from * 131 + to));
  const std::size_t len = r.below(3) == 0 ? 0 : r.below(max_len + 1);
  std::vector<std::byte> b(len);
  for (std::size_t i = 0; i < len; ++i) b[i] = static_cast<std::byte>((from * 37 + to * 11 + i * 7 + round) & 0xff);
  return b;
}

std::vector<std::vector<std::byte>> outgoing(int round, std::size_t max_len) {
  std::vector<std::vector<std::byte>> out;
  for (int d = 0; d < nodes(); ++d) out.push_back(buffer(me(), d, round, max_len));
  return out;
}

TEST(Exchange, EveryBufferArrivesFromItsSender) {
  const auto in = chaos::exchange(outgoing(0, 3000));
  ASSERT_EQ(in.size(), static_cast<std::size_t>(nodes()));
  for (int s = 0; s < nodes(); ++s) {
    EXPECT_EQ(in[static_cast<std::size_t>(s)], buffer(s, me(), 0, 3000)) << "from node " << s;
  }
}

TEST(Exchange, BuffersLargerThanOneMessageArriveWhole) {
  const std::size_t big = squall::am::max_payload() * 3 + 5;
  auto byte_of = [](std::size_t i, int sender) {
    return static_cast<long long>((i * 13 + static_cast<std::size_t>(sender)) & 0xff);
  };
  std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(nodes()));
  auto& to_next = out[static_cast<std::size_t>((me() + 1) % nodes())];
  to_next.resize(big);
  for (std::size_t i = 0; i < big; ++i) to_next[i] = static_cast<std::byte>(byte_of(i, me()));
  const auto in = chaos::exchange(out);
  const int from = (me() + nodes() - 1) % nodes();
  const auto& got = in[static_cast<std::size_t>(from)];
  ASSERT_EQ(got.size(), big);
  EXPECT_TRUE(every(big, [&](std::size_t i) { return describe(i, static_cast<long long>(got[i]), byte_of(i, from)); }));
}

TEST(Exchange, OneMessagePerNonEmptyBufferToAnotherNode) {
  auto out = outgoing(1, 500);
  std::uint64_t expected = 0;
  for (int d = 0; d < nodes(); ++d) expected += d != me() && !out[static_cast<std::size_t>(d)].empty();
  const auto messages = growth("chaos.messages", [&] { chaos::exchange(std::move(out)); });
  EXPECT_EQ(messages, expected);
}

TEST(Exchange, ManyExchangesBackToBack) {
  // No barrier between rounds: a node may still wait for round k while round k+1 arrives.
  int wrong = 0;
  for (int round = 10; round < 110; ++round) {
    const auto in = chaos::exchange(outgoing(round, 64));
    for (int s = 0; s < nodes(); ++s) {
      if (in[static_cast<std::size_t>(s)] != buffer(s, me(), round, 64) && wrong++ == 0) {
        ADD_FAILURE() << "round " << round << ": wrong buffer from node " << s;
      }
    }
  }
  EXPECT_EQ(wrong, 0);
}

struct particle {
  std::int32_t from, seq;
  double x;
  bool operator==(const particle&) const = default;
};

TEST(Exchange, TypedFormKeepsElements) {
  std::vector<std::vector<particle>> out(static_cast<std::size_t>(nodes()));
  for (int d = 0; d < nodes(); ++d) {
    for (int k = 0; k < d + 2; ++k) out[static_cast<std::size_t>(d)].push_back({me(), k, me() + 0.25 * k});
  }
  const auto in = chaos::exchange(out);
  for (int s = 0; s < nodes(); ++s) {
    std::vector<particle> want;
    for (int k = 0; k < me() + 2; ++k) want.push_back({s, k, s + 0.25 * k});
    EXPECT_EQ(in[static_cast<std::size_t>(s)], want) << "from node " << s;
  }
}

TEST(Allgather, ConcatenatesInNodeOrder) {
  // Node p contributes p*3 % 5 values (some contribute nothing).
  auto part = [](int p) {
    std::vector<std::int64_t> v;
    for (int k = 0; k < p * 3 % 5; ++k) v.push_back(p * 100 + k);
    return v;
  };
  const auto mine = part(me());
  const auto all = chaos::allgather(std::span<const std::int64_t>(mine));
  std::vector<std::int64_t> want;
  for (int p = 0; p < nodes(); ++p) {
    const auto v = part(p);
    want.insert(want.end(), v.begin(), v.end());
  }
  EXPECT_EQ(all, want);
  EXPECT_EQ(chaos::exchange_nodes(), nodes());
}

}  // namespace
