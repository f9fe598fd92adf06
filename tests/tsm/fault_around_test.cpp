// SPDX-License-Identifier: BSD-3-Clause
// Stache's fault-around at the home (libtsm/PROTOCOL.md): a home's fault on a block whose
// predecessor it holds takes the next blocks it is home to and nobody holds, up to 16
// (SQUALL_TSM_FAULT_AROUND's default), ReadWrite at once; a fault where the last window
// ended doubles the window (up to 64 times the setting). Exact counts for a sweep, a sweep
// that meets a block another node holds, and a sparse pattern; the home's own requests send
// no message; other nodes still read what the home wrote. A node alone in its job takes the
// whole aligned chunk of 32 windows around a fault instead.
#include <gtest/gtest.h>

#include <cstdint>

#include <squall/squall.hpp>
#include <squall/stats.hpp>
#include <squall/tsm.hpp>
#include <squall/tsm/protocol.hpp>

namespace {

using namespace squall;

constexpr std::size_t kBlocks = 64;
constexpr std::size_t kWordsPerBlock = 4096 / sizeof(std::uint64_t);

// kBlocks fresh blocks, all homed at node 0.
struct homed_at_zero {
  homed_at_zero() {
    tsm::barrier();
    before = tsm::counts_of(mem);
    tsm::barrier();
  }
  ~homed_at_zero() { tsm::free(mem); }
  std::uint64_t& word(std::size_t block, std::size_t index = 0) const { return mem[block * kWordsPerBlock + index]; }
  // This node's counts once every node is here: on the thread fault path the fault thread
  // counts, and the barrier orders its counts before this read (as in counts_test).
  tsm::counts settled() const {
    tsm::barrier();
    return tsm::counts_of(mem);
  }
  std::uint64_t* mem = tsm::alloc<std::uint64_t>(
      kBlocks * kWordsPerBlock, {.homes = memory::home_policy::function([](memory::block_index) { return 0; })});
  tsm::counts before;
};

// Every node reads every block's first word: what node 0 wrote there.
void expect_everyone_reads(const homed_at_zero& m) {
  tsm::barrier();
  for (std::size_t b = 0; b < kBlocks; ++b) EXPECT_EQ(m.word(b), 100 + b) << "block " << b;
  tsm::barrier();
}

TEST(FaultAround, AHomeSweepOverFreshMemoryFaultsOnceAWindow) {
  if (nodes() < 2) GTEST_SKIP() << "needs 2 nodes (alone, a node takes whole chunks)";
  homed_at_zero m;
  if (node() == 0) {
    const std::uint64_t sent_before = stats::take().get("am.messages_sent");
    for (std::size_t b = 0; b < kBlocks; ++b) m.word(b) = 100 + b;
    // Its own requests are served in place: not one message for 64 blocks.
    EXPECT_EQ(stats::take().get("am.messages_sent") - sent_before, 0u);
  }
  const tsm::counts after = m.settled();
  if (node() == 0) {
    // Faults at 0 (no predecessor held), then 1 (takes 2-16), 17 (a window of 32: 18-48) and
    // 49 (of 64: 50-63, the rest).
    EXPECT_EQ(after.write_misses - m.before.write_misses, 4u);
    EXPECT_EQ(after.claimed_ahead - m.before.claimed_ahead, 60u);
    EXPECT_EQ(after.requests_served - m.before.requests_served, 4u);
  }
  expect_everyone_reads(m);
}

// Node 1 writes block 10 first: the home's window stops short of it, its fault on block 10
// gets node 1's bytes back, and the sweep goes on from there.
TEST(FaultAround, StopsAtABlockAnotherNodeHolds) {
  if (nodes() < 2) GTEST_SKIP() << "needs 2 nodes";
  homed_at_zero m;
  if (node() == 1) m.word(10, 5) = 99;
  tsm::barrier();
  if (node() == 0) {
    for (std::size_t b = 0; b < kBlocks; ++b) m.word(b) = 100 + b;
  }
  const tsm::counts after = m.settled();
  if (node() == 0) {
    // Faults at 0, 1 (takes 2-9), 10 (from node 1, where the window ended: takes 11-41) and
    // 42 (takes 43-63).
    EXPECT_EQ(after.write_misses - m.before.write_misses, 4u);
    EXPECT_EQ(after.claimed_ahead - m.before.claimed_ahead, 60u);
  }
  expect_everyone_reads(m);
  EXPECT_EQ(m.word(10, 5), 99u);
  tsm::barrier();
}

// Every other block: no fault finds its predecessor held, so nothing is taken ahead.
TEST(FaultAround, ASparsePatternTakesNothingAhead) {
  if (nodes() < 2) GTEST_SKIP() << "needs 2 nodes (alone, a node takes whole chunks)";
  homed_at_zero m;
  if (node() == 0) {
    for (std::size_t b = 0; b < kBlocks; b += 2) m.word(b) = 1;
  }
  const tsm::counts after = m.settled();
  if (node() == 0) {
    EXPECT_EQ(after.write_misses - m.before.write_misses, kBlocks / 2);
    EXPECT_EQ(after.claimed_ahead - m.before.claimed_ahead, 0u);
  }
  tsm::barrier();
}

// Alone in the job, every block is the node's and nobody will ask for one: a fault on fresh
// memory takes every fresh block of its aligned chunk of 512 (32 windows of 16), so every
// other block of 64 written costs one fault a chunk the allocation spans, and no message.
TEST(FaultAround, AloneANodeTakesTheWholeChunkAroundAFault) {
  if (nodes() != 1) GTEST_SKIP() << "needs a job of 1 node";
  homed_at_zero m;
  const memory::segment s = memory::segment_of(m.mem);
  const memory::block_index first = s.block_of(m.mem), last = s.block_of(&m.word(kBlocks - 1));
  constexpr std::size_t kChunk = 32 * 16;
  const std::uint64_t sent_before = stats::take().get("am.messages_sent");
  for (std::size_t b = 0; b < kBlocks; b += 2) m.word(b) = 1;
  EXPECT_EQ(stats::take().get("am.messages_sent") - sent_before, 0u);
  const tsm::counts after = m.settled();
  const std::size_t chunks = last / kChunk - first / kChunk + 1;
  EXPECT_EQ(after.write_misses - m.before.write_misses, chunks);
  EXPECT_GE(after.claimed_ahead - m.before.claimed_ahead, kBlocks - chunks);
  for (std::size_t b = 0; b < kBlocks; ++b) EXPECT_EQ(s.tag_of(first + b), memory::tag::read_write) << "block " << b;
}

// A protocol that only counts its faults and lets each access through.
class counting_protocol final : public tsm::protocol {
 public:
  std::string_view name() const override { return "counting"; }
  void attach(memory::block_index, memory::block_index, std::size_t) override {}
  void read_fault(memory::segment s, memory::block_index b) override {
    ++faults;
    s.set_tag(b, memory::tag::read_only);
  }
  void write_fault(memory::segment s, memory::block_index b) override {
    ++faults;
    if (s.tag_of(b) == memory::tag::read_only) s.set_tag(b, memory::tag::invalid);
    s.set_tag(b, memory::tag::read_write);
  }
  int faults = 0;
};

// Alone, the chunk stache takes stops where another protocol's range begins: that protocol
// still hears of every first touch of its blocks.
TEST(FaultAround, AloneTheChunkStopsAtAnotherProtocolsRange) {
  if (nodes() != 1) GTEST_SKIP() << "needs a job of 1 node";
  counting_protocol other;
  const tsm::range_binding range{kBlocks / 2 * 4096, kBlocks / 2 * 4096, &other};
  auto* mem = static_cast<std::uint64_t*>(tsm::alloc_bound(kBlocks * 4096, {&range, 1}));
  const memory::segment s = memory::segment_of(mem);
  mem[0] = 1;  // stache's first block: takes the rest of its half
  for (std::size_t b = 1; b < kBlocks / 2; ++b) EXPECT_EQ(s.tag_of(b), memory::tag::read_write) << "block " << b;
  for (std::size_t b = kBlocks / 2; b < kBlocks; ++b) EXPECT_EQ(s.tag_of(b), memory::tag::invalid) << "block " << b;
  for (std::size_t b = kBlocks / 2; b < kBlocks; ++b) mem[b * kWordsPerBlock] = b;
  EXPECT_EQ(other.faults, static_cast<int>(kBlocks / 2));
  tsm::free(mem);
}

// Blocks taken ahead are ordinary ReadWrite copies at the home: another node's write takes
// them away, and the home's next read misses and sees it.
TEST(FaultAround, ABlockTakenAheadIsStillCoherent) {
  if (nodes() < 2) GTEST_SKIP() << "needs 2 nodes";
  homed_at_zero m;
  if (node() == 0) {
    m.word(0) = 1;
    m.word(1) = 2;  // takes 2-16
  }
  tsm::barrier();
  if (node() == 1) m.word(7) = 77;
  tsm::barrier();
  EXPECT_EQ(m.word(7), 77u);
  const tsm::counts after = m.settled();
  if (node() == 0) {
    EXPECT_EQ(after.claimed_ahead - m.before.claimed_ahead, 15u);
    EXPECT_EQ(after.read_misses - m.before.read_misses, 1u);  // block 7, back from node 1
  }
  tsm::barrier();
}

}  // namespace
