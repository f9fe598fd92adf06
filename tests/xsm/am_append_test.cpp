// SPDX-License-Identifier: BSD-3-Clause
// active-message append (libxsm/PROTOCOLS.md): every node's buffer holds what was sent to it
// (compared sorted: senders interleave in arrival order), exact messages, bytes and fetches,
// two phases on alternate buffer sets, overflow reported by end_phase on every node, and a
// phase's appends leaving packed, the program's aggregation factor restored.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <vector>

#include <squall/am.hpp>
#include <squall/squall.hpp>
#include <squall/stats.hpp>
#include <squall/tsm.hpp>
#include <squall/xsm/am_append.hpp>
#include "usage_error_of.hpp"

namespace {

using namespace squall;

struct particle {
  std::int32_t from, to, seq, phase;
  double x, y;
};
static_assert(sizeof(particle) == 32);

constexpr std::size_t capacity = 400;  // 12,800 bytes: 4 blocks of 4 KiB per buffer

std::size_t sent(int from, int to, int phase) { return static_cast<std::size_t>((from + 2 * to + phase) % 5 * 9 + 1); }

particle make(int from, int to, int seq, int phase) { return {from, to, seq, phase, from + 0.25 * seq, to - 0.5 * phase}; }

bool before(const particle& a, const particle& b) { return std::tie(a.from, a.seq) < std::tie(b.from, b.seq); }

std::uint64_t blocks_for(std::size_t items) { return (items * sizeof(particle) + 4095) / 4096; }

constexpr std::string_view item_handler = "squall::xsm::am_append::on_item";

void run_phase(xsm::am_append& moved, int phase) {
  const int n = nodes(), me = node();
  const std::uint64_t messages_before = moved.messages.value(), bytes_before = moved.bytes.value(),
                      fetches_before = moved.fetches.value();
  const auto wire_before = stats::take().handler(item_handler);
  // Interleaved destinations, as particles leave in no particular order.
  for (int seq = 0; seq < 46; ++seq) {
    for (int to = 0; to < n; ++to) {
      if (static_cast<std::size_t>(seq) < sent(me, to, phase)) moved.append(to, make(me, to, seq, phase));
    }
  }
  const auto wire_after = stats::take().handler(item_handler);
  moved.end_phase();

  std::uint64_t messages = 0, fetches = 0;
  std::uint64_t appends = 0;  // this node's own included: they take the same handler
  for (int to = 0; to < n; ++to) appends += sent(me, to, phase);
  // On the wire an item carries its block's address (8 bytes) and its phase's low byte.
  EXPECT_EQ(wire_after.sent - wire_before.sent, appends);
  EXPECT_EQ(wire_after.sent_bytes - wire_before.sent_bytes, appends * (sizeof(particle) + 8 + 1));
  for (int to = 0; to < n; ++to) {
    if (to != me) messages += sent(me, to, phase);
  }
  for (int owner = 0; owner < n; ++owner) {
    std::vector<particle> expected, got;
    for (int from = 0; from < n; ++from) {
      for (int seq = 0; seq < static_cast<int>(sent(from, owner, phase)); ++seq) expected.push_back(make(from, owner, seq, phase));
    }
    const auto in = moved.received<particle>(owner);  // another node's buffer: fetched
    got.assign(in.begin(), in.end());
    ASSERT_EQ(got.size(), expected.size()) << "node " << owner;
    std::sort(got.begin(), got.end(), before);
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(std::tie(got[i].from, got[i].to, got[i].seq, got[i].phase, got[i].x, got[i].y),
                std::tie(expected[i].from, expected[i].to, expected[i].seq, expected[i].phase, expected[i].x, expected[i].y))
          << "node " << owner << " item " << i;
    }
    if (owner != me) fetches += blocks_for(expected.size());
  }
  EXPECT_EQ(moved.messages.value() - messages_before, messages);
  EXPECT_EQ(moved.bytes.value() - bytes_before, messages * sizeof(particle));
  EXPECT_EQ(moved.fetches.value() - fetches_before, fetches);
}

TEST(AmAppend, EveryAppendLandsOncePerPhaseWithExactCounts) {
  xsm::am_append moved(sizeof(particle), capacity);
  run_phase(moved, 0);
  run_phase(moved, 1);  // the other buffer set; no barrier between reading and appending
  run_phase(moved, 2);  // back to the first set
  // Counted here, not per phase: the next phase's items may arrive while this one is read.
  std::uint64_t received = 0;
  for (int phase = 0; phase < 3; ++phase) {
    for (int from = 0; from < nodes(); ++from) received += sent(from, node(), phase);
  }
  EXPECT_EQ(moved.items_received.value(), received);
  tsm::barrier();
}

// A message carries its phase's low byte: past 256 phases, items still land in their
// phase's set, and each phase reads exactly its own.
TEST(AmAppend, PhasesPastTheMessagesPhaseByteStayApart) {
  xsm::am_append moved(sizeof(particle), 4);
  const int n = nodes(), me = node(), next = (me + 1) % n;
  for (int phase = 0; phase < 300; ++phase) {
    moved.append(next, make(me, next, 0, phase));
    moved.append(next, make(me, next, 1, phase));
    moved.end_phase();
    const auto in = moved.received<particle>(me);
    ASSERT_EQ(in.size(), 2u) << "phase " << phase;
    for (const particle& p : in) ASSERT_EQ(p.phase, phase);
  }
  tsm::barrier();
}

// Node 0 appends 64 items to node 1: they leave 16 to a packet (each packet the progress thread
// sent early, partly filled, adds one), and end_phase gives the program back its factor.
void appends_packed(unsigned program_factor) {
  constexpr std::uint64_t items = 64, per_packet = 16;
  am::set_aggregation(program_factor);
  xsm::am_append moved(sizeof(particle), items);
  const auto before = stats::take();
  if (node() == 0 && nodes() > 1) {
    for (int seq = 0; seq < static_cast<int>(items); ++seq) moved.append(1, make(0, 1, seq, 0));
    EXPECT_EQ(am::aggregation(), std::max<unsigned>(program_factor, per_packet));
    const auto after = stats::take();
    const auto packets = after.get("am.packets_sent") - before.get("am.packets_sent");
    const auto timed = after.get("progress.timed_flushes") - before.get("progress.timed_flushes");
    if (program_factor <= per_packet) {
      EXPECT_GE(packets, items / per_packet);
      EXPECT_LE(packets, items / per_packet + timed);
    }
  }
  moved.end_phase();
  EXPECT_EQ(am::aggregation(), program_factor);
  if (nodes() > 1) {
    EXPECT_EQ(moved.received_count(1), items);
  }
  tsm::barrier();
  am::set_aggregation(1);
}

TEST(AmAppend, AppendsLeavePackedAndTheProgramsFactorComesBack) {
  appends_packed(1);
  appends_packed(64);  // more than the protocol's: left as it is
}

TEST(AmAppend, OverflowIsReportedByEveryNode) {
  xsm::am_append moved(sizeof(particle), 4);
  for (int seq = 0; seq < 3; ++seq) moved.append(0, make(node(), 0, seq, 0));  // 3 per node to node 0
  const std::size_t arriving = 3 * static_cast<std::size_t>(nodes());
  if (arriving <= 4) {
    moved.end_phase();
    EXPECT_EQ(moved.received_count(0), arriving);
  } else {
    try {
      moved.end_phase();
      ADD_FAILURE() << "no overflow reported";
    } catch (const usage_error& e) {
      const std::string expected = "node 0 received " + std::to_string(arriving) + " items, capacity 4";
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
    EXPECT_EQ(moved.received_count(0), 4u);  // the first 4 kept
  }
  EXPECT_THROW(moved.append(nodes(), make(node(), 0, 0, 0)), usage_error);
  EXPECT_THROW(moved.append(0, std::int32_t{1}), usage_error);
  tsm::barrier();
}

TEST(AmAppend, BlockSizeZeroIsAUsageError) {
  const std::string what = squall::test::usage_error_of([] { xsm::am_append moved(8, 10, 0); });
  EXPECT_NE(what.find("am_append: the block size must be a power of two"), std::string::npos) << what;
  tsm::barrier();
}

TEST(AmAppend, ItemSizesThatDifferBetweenNodesAreAnErrorOnEveryNode) {
  const std::size_t item_size = node() == 0 ? 8 : 16;  // one node alone differs on 1 node: none
  const std::string what = squall::test::usage_error_of([item_size] { xsm::am_append moved(item_size, 10); });
  if (nodes() > 1) {
    EXPECT_NE(what.find("am_append: the item size differs between nodes (8 on some, 16 on others)"), std::string::npos)
        << what;
  } else {
    EXPECT_EQ(what, squall::test::no_usage_error);
  }
  tsm::barrier();
}

}  // namespace
