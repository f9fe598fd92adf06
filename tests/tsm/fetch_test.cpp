// SPDX-License-Identifier: BSD-3-Clause
// tsm::fetch: read copies of many blocks asked for at once. Exact counts: a fetch asks for
// every block this node cannot read and nothing else; the reads that follow do not miss;
// a write elsewhere still invalidates a fetched copy; bad ranges are refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>

namespace {

using namespace squall;

constexpr std::size_t kBlocks = 64;  // more than a fetch keeps in flight at once
constexpr std::size_t kWordsPerBlock = 4096 / sizeof(std::uint64_t);

// kBlocks blocks, block b homed at node b % nodes, each starting with a word its home wrote.
struct striped {
  striped() {
    for (std::size_t b = 0; b < kBlocks; ++b) {
      if (home(b) == node()) mem[b * kWordsPerBlock] = 1000 + b;
    }
    tsm::barrier();
    before = tsm::counts_of(mem);
    tsm::barrier();  // no node asks for anything before every node has its `before`
  }
  ~striped() { tsm::free(mem); }
  static int home(std::size_t b) { return static_cast<int>(b % static_cast<std::size_t>(nodes())); }
  std::size_t blocks_homed_elsewhere() const {
    std::size_t count = 0;
    for (std::size_t b = 0; b < kBlocks; ++b) count += home(b) != node();
    return count;
  }
  std::uint64_t sum_of_first_words() const {
    std::uint64_t sum = 0;
    for (std::size_t b = 0; b < kBlocks; ++b) sum += static_cast<volatile std::uint64_t*>(mem)[b * kWordsPerBlock];
    return sum;
  }
  // This node's counts once every node is here: a fault thread or the progress thread may
  // be counting until then, and the barrier orders their counts before this read (as in
  // counts_test).
  tsm::counts settled() const {
    tsm::barrier();
    return tsm::counts_of(mem);
  }
  std::uint64_t* mem = tsm::alloc<std::uint64_t>(
      kBlocks * kWordsPerBlock,
      {.homes = memory::home_policy::function([](memory::block_index b) { return home(b); })});
  tsm::counts before;
};

constexpr std::uint64_t kExpectedSum = kBlocks * 1000 + kBlocks * (kBlocks - 1) / 2;

TEST(Fetch, AsksForEveryBlockThisNodeCannotReadAndTheReadsThenHit) {
  striped s;
  tsm::fetch(std::vector<tsm::byte_range>{{s.mem, kBlocks * 4096}});
  const tsm::counts fetched = s.settled();
  EXPECT_EQ(fetched.fetched - s.before.fetched, s.blocks_homed_elsewhere());
  EXPECT_EQ(s.sum_of_first_words(), kExpectedSum);
  const tsm::counts after = s.settled();
  EXPECT_EQ(after.read_misses - s.before.read_misses, 0u);
  EXPECT_EQ(after.write_misses + after.upgrades - s.before.write_misses - s.before.upgrades, 0u);
  // Once every node has fetched, each block has been asked for by every node but its home,
  // by a request or (a block already clean at a home on this host) copied from the home's
  // memory without one.
  const std::uint64_t asked = allreduce(after.requests_served - s.before.requests_served) +
                              allreduce(after.one_sided_reads - s.before.one_sided_reads);
  EXPECT_EQ(asked, kBlocks * static_cast<std::size_t>(nodes() - 1));
}

TEST(Fetch, AsksNothingForCopiesItHasAndTakesManyRangesAtOnce) {
  striped s;
  EXPECT_EQ(s.sum_of_first_words(), kExpectedSum);  // one miss per block homed elsewhere
  const tsm::counts missed = s.settled();
  EXPECT_EQ(missed.read_misses - s.before.read_misses, s.blocks_homed_elsewhere());
  // Overlapping and empty ranges, a range of a single byte in the middle of a block.
  const std::vector<tsm::byte_range> ranges{{s.mem, 3 * 4096}, {s.mem + kWordsPerBlock, 4096}, {s.mem, 0},
                                            {reinterpret_cast<char*>(s.mem) + 5 * 4096 + 17, 1}};
  tsm::fetch(ranges);
  EXPECT_EQ(s.settled().fetched - s.before.fetched, 0u);
}

// After a fetch, another node writes a fetched block: the copy goes, and the next read
// misses and sees the new value. A fetch is a hint, never a way around coherence.
TEST(Fetch, AWriteElsewhereStillInvalidatesAFetchedCopy) {
  if (nodes() < 2) GTEST_SKIP() << "needs 2 nodes";
  striped s;
  tsm::fetch(std::vector<tsm::byte_range>{{s.mem, kBlocks * 4096}});
  tsm::barrier();
  if (node() == 1) s.mem[0] = 7;  // block 0, homed at node 0, read by everyone
  tsm::barrier();
  EXPECT_EQ(s.sum_of_first_words(), kExpectedSum - 1000 + 7);
  const tsm::counts after = s.settled();
  // Block 0 again (its home too lost its copy to the write), except on the writer.
  EXPECT_EQ(after.read_misses - s.before.read_misses, node() == 1 ? 0u : 1u);
  tsm::barrier();
}

// Node 0 writes every block while the others fetch them all, round after round: requests
// for blocks in the middle of a transaction wait at their homes, many from one node at
// once, and every node still ends with the last values.
TEST(Fetch, FetchesRacingWritesEndWithTheLastValues) {
  striped s;
  constexpr std::uint64_t kRounds = 20;
  for (std::uint64_t r = 1; r <= kRounds; ++r) {
    if (node() == 0) {
      for (std::size_t b = 0; b < kBlocks; ++b) s.mem[b * kWordsPerBlock + 1] = r;
    } else {
      tsm::fetch(std::vector<tsm::byte_range>{{s.mem, kBlocks * 4096}});
    }
  }
  tsm::barrier();
  for (std::size_t b = 0; b < kBlocks; ++b) EXPECT_EQ(s.mem[b * kWordsPerBlock + 1], kRounds) << "block " << b;
  tsm::barrier();
}

TEST(Fetch, RangesOutsideTsmMemoryAreRefused) {
  striped s;
  std::uint64_t private_word = 0;
  EXPECT_THROW(tsm::fetch(std::vector<tsm::byte_range>{{&private_word, sizeof private_word}}), usage_error);
  EXPECT_THROW(tsm::fetch(std::vector<tsm::byte_range>{{s.mem, kBlocks * 4096 + 1}}), usage_error);
  EXPECT_EQ(s.settled().fetched - s.before.fetched, 0u);  // nothing was asked
}

}  // namespace
