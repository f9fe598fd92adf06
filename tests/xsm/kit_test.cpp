// SPDX-License-Identifier: BSD-3-Clause
// The protocol kit under any protocol: fence() waits for a protocol's messages however long
// the chain they form; every synchronisation point reaches every live protocol's hooks; a
// block larger than one message travels in parts; tsm::bind is refused on every node or on none;
// the kit's grant_hold answers a held recall once, when the hold ends.
#include <gtest/gtest.h>

#include <cstdint>

#include <squall/am.hpp>
#include <squall/squall.hpp>
#include <squall/tsm.hpp>
#include <squall/xsm.hpp>

#include <squall/error.hpp>

#include "migratory.hpp"
#include "usage_error_of.hpp"

namespace {

using namespace squall;

// Faults give access at once; messages hop from node to node; hooks are counted.
class hopping final : public xsm::protocol {
 public:
  std::string_view name() const override { return "hopping"; }
  void attach(xsm::block_index, xsm::block_index, std::size_t) override {}
  void read_fault(xsm::segment s, xsm::block_index b) override { s.set_tag(b, xsm::tag::read_write); }
  void write_fault(xsm::segment s, xsm::block_index b) override { s.set_tag(b, xsm::tag::read_write); }
  void started(xsm::segment s) override { seg = s; }

  void on_hop(xsm::segment s, xsm::block_index b, int, std::uint32_t left) {
    ++hops_here;
    if (left > 0) xsm::send<&hopping::on_hop>((node() + 1) % nodes(), s, b, left - 1);
  }

  void before_barrier() override { ++before_barriers; }
  void after_barrier() override { ++after_barriers; }
  void after_acquire() override { ++acquires; }
  void before_release() override { ++releases; }

  xsm::segment seg;
  std::uint64_t hops_here = 0;
  int before_barriers = 0, after_barriers = 0, acquires = 0, releases = 0;
};

TEST(Kit, FenceWaitsForAChainOfProtocolMessages) {
  hopping h;
  auto* mem = xsm::alloc<int>(1024, h);
  constexpr std::uint32_t chain = 2000;
  if (node() == 0) xsm::send<&hopping::on_hop>(0, h.seg, 0, chain - 1);
  fence();
  // Read under the node lock: the hops are counted by handlers.
  std::uint64_t here = 0;
  am::wait_until([&] {
    here = h.hops_here;
    return true;
  });
  EXPECT_EQ(allreduce(here), chain);
  xsm::free(mem);
}

TEST(Kit, EverySynchronisationPointReachesTheHooks) {
  hopping h;
  auto* mem = xsm::alloc<int>(1024, h);
  tsm::barrier();
  (void)tsm::allreduce(1, op::sum{});
  {
    tsm::lock_array locks(1);
    locks.acquire(0);
    locks.release(0);
  }
  EXPECT_EQ(h.before_barriers, 2);
  EXPECT_EQ(h.after_barriers, 2);
  EXPECT_EQ(h.acquires, 1);
  EXPECT_EQ(h.releases, 1);
  xsm::free(mem);
  tsm::barrier();
  EXPECT_EQ(h.before_barriers, 2) << "a freed segment's protocol is not told any more";
}

TEST(Kit, BlocksLargerThanAMessageTravelInParts) {
  migratory_example::migratory mig;
  constexpr std::size_t block = 65536, words = block / sizeof(std::uint64_t);
  ASSERT_GT(block, am::max_payload());
  auto* data = xsm::alloc<std::uint64_t>(2 * words, mig, {.block_size = block});
  for (int turn = 0; turn < nodes(); ++turn) {
    if (turn == node()) {
      for (std::size_t i = 0; i < 2 * words; ++i) data[i] = data[i] + i;
    }
    tsm::barrier();
  }
  for (std::size_t i = 0; i < 2 * words; i += 997) EXPECT_EQ(data[i], i * static_cast<std::size_t>(nodes())) << i;
  xsm::free(data);
}

// tsm::bind is collective: a bind that one node refuses (it touched the range already), or
// that nodes give different ranges, is refused on every node, and the range keeps stache
// everywhere. Before, the other nodes bound it, and the job ended at the first stache message
// with "a message for protocol ... stache arrived for block ..., which protocol ... runs here".
TEST(Kit, BindIsRefusedOnEveryNodeOrOnNone) {
  if (nodes() < 2) GTEST_SKIP() << "needs two nodes";
  using squall::test::usage_error_of;
  const std::size_t words = 512;  // one block of uint64_t
  auto* mem = tsm::alloc<std::uint64_t>(words * static_cast<std::size_t>(nodes()));
  {
    migratory_example::migratory m;
    const std::size_t blocks = node() == 0 ? 1 : 2;  // node 0 asks for one block, the others two
    const std::string what = usage_error_of([&] { xsm::bind(mem, blocks * 4096, m); });
    EXPECT_NE(what.find("tsm::bind is collective: nodes bound different ranges or protocols"), std::string::npos)
        << what;
  }
  {
    // The last node writes the block it is home to (round robin): no message, no other node knows.
    const int last = nodes() - 1;
    if (node() == last) mem[words * static_cast<std::size_t>(last)] = 7;
    migratory_example::migratory m;
    const std::string what = usage_error_of([&] { xsm::bind(mem, words * nodes() * 8, m); });
    const char* expected =
        node() == last ? "were used under protocol 'stache' already" : "another node refused this bind";
    EXPECT_NE(what.find(expected), std::string::npos) << what;
  }
  for (int b = 0; b < nodes(); ++b) EXPECT_EQ(tsm::protocol_at(mem + words * b).name(), "stache");
  // Every node still runs the memory under stache: each writes its own block, all read all.
  mem[words * static_cast<std::size_t>(node()) + 1] = static_cast<std::uint64_t>(node()) + 1;
  tsm::barrier();
  for (int b = 0; b < nodes(); ++b) {
    EXPECT_EQ(mem[words * static_cast<std::size_t>(b) + 1], static_cast<std::uint64_t>(b) + 1);
  }
  tsm::barrier();
  tsm::free(mem);
}


// grant_hold on its own (every node alike, no messages): what a protocol's `answer` got.
struct answers {
  int count = 0;
  int asked_by = -1;
  xsm::block_index block = 0;
};
void record_answer(void* self, xsm::segment, xsm::block_index b, int asked_by) {
  auto& a = *static_cast<answers*>(self);
  ++a.count;
  a.asked_by = asked_by;
  a.block = b;
}

// A recall of the held block waits for end(), and is answered once; a recall of any other
// block, or of nothing held, is to be answered at once; a second recall is a protocol error.
TEST(GrantHold, ARecallOfTheHeldBlockIsAnsweredOnceWhenTheHoldEnds) {
  answers a;
  xsm::grant_hold hold(record_answer, &a);
  const xsm::segment s{};
  EXPECT_FALSE(hold.defer(s, 3, 1));  // nothing held
  hold.granted(s, 3);
  EXPECT_FALSE(hold.defer(s, 4, 1));  // another block
  EXPECT_TRUE(hold.defer(s, 3, 1));
  EXPECT_EQ(a.count, 0);
  EXPECT_THROW(hold.defer(s, 3, 2), usage_error);
  hold.end();
  EXPECT_EQ(a.count, 1);
  EXPECT_EQ(a.asked_by, 1);
  EXPECT_EQ(a.block, 3u);
  hold.end();
  EXPECT_EQ(a.count, 1);
  EXPECT_FALSE(hold.defer(s, 3, 1));  // the hold is over
  hold.quiesce();
}

// A grant of another block ends the hold of the last one first.
TEST(GrantHold, AGrantOfAnotherBlockEndsTheHoldFirst) {
  answers a;
  xsm::grant_hold hold(record_answer, &a);
  const xsm::segment s{};
  hold.granted(s, 3);
  EXPECT_TRUE(hold.defer(s, 3, 2));
  hold.granted(s, 5);
  EXPECT_EQ(a.count, 1);
  EXPECT_EQ(a.block, 3u);
  EXPECT_TRUE(hold.defer(s, 5, 2));
  hold.end();
  EXPECT_EQ(a.count, 2);
  EXPECT_EQ(a.block, 5u);
  hold.quiesce();
}

// Once the access has begun, a held recall is answered by the deferred call at the hold's end
// (hold_ns() later), with nothing else of the program's doing; not before the access begins.
TEST(GrantHold, TheHoldEndsByItselfAfterTheAccessBegan) {
  answers a;
  xsm::grant_hold hold(record_answer, &a);
  const xsm::segment s{};
  am::run_locked([&] {
    hold.granted(s, 7);
    EXPECT_TRUE(hold.defer(s, 7, 0));
  });
  const std::int64_t until = am::clock_ns() + 4 * xsm::grant_hold::hold_ns();
  while (am::clock_ns() < until) am::poll();
  am::run_locked([&] { EXPECT_EQ(a.count, 0); });  // the access has not begun: still held
  const std::int64_t began = am::clock_ns();
  hold.access_runs();
  am::wait_until([&] { return a.count == 1; });
  EXPECT_GE(am::clock_ns() - began, xsm::grant_hold::hold_ns());
  EXPECT_EQ(a.block, 7u);
  hold.quiesce();
}

}  // namespace
