// SPDX-License-Identifier: BSD-3-Clause
// Communication patterns (squall/pattern.hpp): typed packing by position lists, and both
// collective builds run end to end with one active message per peer. Runs under squallrun
// -n 1, 2 and 4.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <squall/squall.hpp>

namespace am = squall::am;

namespace {

using lists = std::vector<std::vector<std::int64_t>>;

struct triple {  // 12 bytes: not a power of two
  std::int32_t a, b, c;
  bool operator==(const triple&) const = default;
};

TEST(Pattern, PackAndUnpackByPositions) {
  std::vector<triple> from(10), to(10, triple{-1, -1, -1});
  for (std::int32_t i = 0; i < 10; ++i) from[static_cast<std::size_t>(i)] = {i, 10 * i, 100 * i};
  const std::vector<std::int64_t> take = {7, 2, 2, 9}, put = {0, 5, 3, 1};
  std::vector<std::byte> packed(take.size() * sizeof(triple));
  squall::pack_elements<triple>(packed.data(), reinterpret_cast<const std::byte*>(from.data()), take.data(), take.size());
  squall::unpack_elements<triple>(reinterpret_cast<std::byte*>(to.data()), put.data(), packed.data(), put.size());
  EXPECT_EQ(to[0], from[7]);
  EXPECT_EQ(to[5], from[2]);
  EXPECT_EQ(to[3], from[2]);
  EXPECT_EQ(to[1], from[9]);
  EXPECT_EQ(to[2], (triple{-1, -1, -1}));
}

// ---- running a pattern forwards: one message per peer, unpacked by the handler.
const squall::comm_pattern* running = nullptr;
std::byte* destination = nullptr;
void on_elements(am::token& t, am::payload bytes) {
  const squall::peer_lists* q = running->peer(t.source());
  ASSERT_NE(q, nullptr);
  ASSERT_EQ(bytes.size(), q->recv.size() * sizeof(double));
  squall::unpack_elements<double>(destination, q->recv.data(), bytes.data(), q->recv.size());
}

void run(const squall::comm_pattern& p, const std::vector<double>& from, std::vector<double>& to) {
  running = &p;
  destination = reinterpret_cast<std::byte*>(to.data());
  squall::barrier();  // every node has set its pattern before any message comes
  const auto* source = reinterpret_cast<const std::byte*>(from.data());
  for (const auto& [f, t] : p.local) to[static_cast<std::size_t>(t)] = from[static_cast<std::size_t>(f)];
  for (const auto& q : p.peers) {
    if (q.send.empty()) continue;
    std::vector<std::byte> out(q.send.size() * sizeof(double));
    squall::pack_elements<double>(out.data(), source, q.send.data(), q.send.size());
    am::send<on_elements>(q.node, am::payload(out));
  }
  squall::fence();
}

double value(int node, std::int64_t position) { return node * 1000.0 + static_cast<double>(position); }

TEST(Pattern, FromRequestsFetchesWhatEachNodeAsked) {
  const int n = squall::nodes(), me = squall::node();
  constexpr std::int64_t size = 40;
  std::vector<double> mine(size);
  for (std::int64_t i = 0; i < size; ++i) mine[static_cast<std::size_t>(i)] = value(me, i);
  // From node d, (me + d + k) % size for k < d + 1 (its own node too: local copies), into
  // consecutive slots; node 0 is asked for one element, node 3 for four.
  lists wanted(static_cast<std::size_t>(n)), landing(static_cast<std::size_t>(n));
  std::int64_t slot = 0;
  for (int d = 0; d < n; ++d) {
    for (int k = 0; k <= d; ++k) {
      wanted[static_cast<std::size_t>(d)].push_back((me + d + k) % size);
      landing[static_cast<std::size_t>(d)].push_back(slot++);
    }
  }
  const lists asked = wanted, slots = landing;
  const squall::comm_pattern p = squall::pattern_from_requests(wanted, landing);

  EXPECT_EQ(p.local.size(), static_cast<std::size_t>(me + 1));
  EXPECT_EQ(p.peers.size(), static_cast<std::size_t>(n - 1));  // every other node asks and is asked
  for (const auto& q : p.peers) {
    EXPECT_NE(q.node, me);
    EXPECT_EQ(q.send.size(), static_cast<std::size_t>(me + 1)) << "node " << q.node << " asks me + 1 elements of me";
    EXPECT_EQ(q.recv, slots[static_cast<std::size_t>(q.node)]);
  }
  EXPECT_EQ(p.highest_recv, slot - 1);

  std::vector<double> got(static_cast<std::size_t>(slot), -1.0);
  run(p, mine, got);
  for (int d = 0; d < n; ++d) {
    for (std::size_t k = 0; k < asked[static_cast<std::size_t>(d)].size(); ++k) {
      EXPECT_EQ(got[static_cast<std::size_t>(slots[static_cast<std::size_t>(d)][k])],
                value(d, asked[static_cast<std::size_t>(d)][k]));
    }
  }
}

TEST(Pattern, FromContributionsDeliversToTheOwners) {
  const int n = squall::nodes(), me = squall::node();
  // Node s sends its elements d .. d+3 to node d's positions 4s+3 .. 4s (its own node too:
  // local copies): every contributor fills a run of four positions of its own at each owner.
  lists sending(static_cast<std::size_t>(n)), target(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d) {
    for (std::int64_t k = 0; k < 4; ++k) {
      sending[static_cast<std::size_t>(d)].push_back(k + d);
      target[static_cast<std::size_t>(d)].push_back(4 * me + (3 - k));
    }
  }
  const squall::comm_pattern p = squall::pattern_from_contributions(sending, target);
  EXPECT_EQ(p.local.size(), 4u);
  EXPECT_EQ(p.highest_send, n + 2);
  std::vector<double> mine(static_cast<std::size_t>(n + 3));
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = value(me, static_cast<std::int64_t>(i));
  std::vector<double> owned(static_cast<std::size_t>(4 * n), -1.0);
  run(p, mine, owned);
  for (int s = 0; s < n; ++s) {
    for (std::int64_t k = 0; k < 4; ++k) {
      EXPECT_EQ(owned[static_cast<std::size_t>(4 * s + (3 - k))], value(s, k + me)) << "from node " << s;
    }
  }
}

TEST(Pattern, ListsThatDoNotFitThrowOnEveryNode) {
  const int n = squall::nodes(), me = squall::node();
  lists wanted(static_cast<std::size_t>(n)), landing(static_cast<std::size_t>(n));
  if (me == n - 1) wanted[0] = {1, 2};  // and no landing positions for them
  try {
    squall::pattern_from_requests(wanted, landing);
    ADD_FAILURE() << "no usage_error";
  } catch (const squall::usage_error& e) {
    const std::string why = e.what();
    if (me == n - 1) {
      EXPECT_NE(why.find("wanted[0] holds 2 positions, landing[0] 0"), std::string::npos) << why;
    } else {
      EXPECT_NE(why.find("node " + std::to_string(n - 1)), std::string::npos) << why;
    }
  }
  // Every node still agrees on its collectives afterwards.
  EXPECT_EQ(squall::allreduce(1), n);
}

TEST(Pattern, OwnListsBelongInLocal) {
  const int n = squall::nodes(), me = squall::node();
  lists send(static_cast<std::size_t>(n)), recv(static_cast<std::size_t>(n));
  send[static_cast<std::size_t>(me)] = {0};
  EXPECT_THROW(squall::pattern_from_lists(send, recv), squall::usage_error);
  EXPECT_THROW(squall::pattern_from_lists(lists(1 + static_cast<std::size_t>(n)), recv), squall::usage_error);
}

}  // namespace
