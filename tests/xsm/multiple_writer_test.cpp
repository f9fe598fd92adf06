// SPDX-License-Identifier: BSD-3-Clause
// The multiple-writer protocol (libxsm/PROTOCOLS.md): nodes writing their own slices of
// shared pages between barriers (radix's pattern), a counter under a lock, a segment shared
// with stache, blocks larger than one message; exact counts of fetches, twins, diffs,
// invalidations and messages, and results equal to a sequential reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>

#include <squall/squall.hpp>
#include <squall/stats.hpp>
#include <squall/tsm.hpp>
#include <squall/xsm.hpp>
#include <squall/xsm/multiple_writer.hpp>

#include "home_views.hpp"
#include "slices.hpp"
#include "usage_error_of.hpp"

namespace {

using namespace squall;
using word = std::uint64_t;

constexpr std::size_t page = 4096;
constexpr std::size_t page_words = page / sizeof(word);
constexpr int phases = 3;

word value(int phase, std::size_t i) { return static_cast<word>(phase + 1) * 0x9E3779B97F4A7C15ull + i * 0x100000001B3ull; }

// Bytes of `now` that differ from `was`: what a diff of that word carries.
std::uint64_t changed_bytes(word was, word now) {
  std::uint64_t n = 0;
  for (int k = 0; k < 8; ++k) n += ((was >> (8 * k)) & 0xff) != ((now >> (8 * k)) & 0xff);
  return n;
}

using squall::test::copies_from_home;

// Messages this node sent to the protocol's own handlers so far.
std::uint64_t protocol_messages() {
  std::uint64_t n = 0;
  for (const auto& h : stats::take().handlers) {
    if (std::string_view(h.name).find("multiple_writer::on_") != std::string_view::npos) n += h.sent;
  }
  return n;
}

using squall::test::slice_of;

// Node k writes its slice (slice_of) of every page's words.
void write_my_slices(word* data, std::size_t page_count, int phase) {
  const auto mine = slice_of(page_words);
  for (std::size_t p = 0; p < page_count; ++p) {
    for (std::size_t i = p * page_words + mine.from; i < p * page_words + mine.to; ++i) data[i] = value(phase, i);
  }
}

// The first of `count` words that is not the last phase's value, or `count`. Tests check it
// with EXPECT, not ASSERT, so that a wrong word never skips the xsm::free that follows (the
// next test would then start with the segment still bound).
std::size_t first_stale(const word* data, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    if (data[i] != value(phases - 1, i)) return i;
  }
  return count;
}

TEST(MultipleWriter, SlicesOfSharedPagesMergeAtBarriers) {
  // Homed round robin, page p at node p % nodes: every node homes one at least.
  const std::size_t pages = std::max<std::size_t>(8, static_cast<std::size_t>(nodes()));
  xsm::multiple_writer mw;
  auto* data = xsm::alloc<word>(pages * page_words, mw);
  const std::uint64_t messages_before = protocol_messages();
  const std::uint64_t remote_reads_before = stats::take().get("memory.remote_reads");
  tsm::barrier();  // no node fetches from one that has not taken its count yet
  for (int phase = 0; phase < phases; ++phase) {
    write_my_slices(data, pages, phase);
    tsm::barrier();
  }
  const bool copies = copies_from_home(stats::take().get("memory.remote_reads") - remote_reads_before);
  const std::uint64_t fetches = mw.fetches.value(), direct = mw.fetches_direct.value(),
                      served = mw.fetches_served.value(), twins = mw.twins.value(),
                      diffs = mw.diffs_sent.value(), diff_messages = mw.diff_messages.value(),
                      diff_bytes = mw.diff_bytes.value(), applied = mw.diffs_applied.value(),
                      invalidations = mw.invalidations.value();
  tsm::barrier();  // a home's last answers, sent as the last phase's barrier ended, are counted now
  const std::uint64_t messages = protocol_messages() - messages_before;
  tsm::barrier();  // every node has its counts before any reads the data below

  const int n = nodes(), me = node();
  std::uint64_t homed_here = 0;
  for (std::size_t p = 0; p < pages; ++p) homed_here += static_cast<int>(p % static_cast<std::size_t>(n)) == me;
  const std::uint64_t elsewhere = pages - homed_here;
  const auto others = static_cast<std::uint64_t>(n - 1);
  // Every phase: a fetch and a twin for each page homed elsewhere, dropped at the barrier;
  // one diff message to each other home (all pages' slices fit one message), answered once.
  EXPECT_EQ(fetches, phases * elsewhere);
  EXPECT_EQ(twins, phases * elsewhere);
  EXPECT_EQ(diffs, phases * elsewhere);
  EXPECT_EQ(invalidations, phases * elsewhere);
  EXPECT_EQ(diff_messages, phases * others);
  // Every node of these tests runs on this host: with home views (on unless
  // SQUALL_HOME_VIEWS=0), or UCX's one-sided reads, each fetch copies the home's memory and no
  // home serves one.
  EXPECT_EQ(direct, copies ? fetches : 0);
  EXPECT_EQ(served, copies ? 0 : phases * homed_here * others);
  EXPECT_EQ(applied, phases * homed_here * others);
  // A fetch by message and its copy; a diff message and its answer (from each home to each
  // other node).
  EXPECT_EQ(messages, fetches - direct + served + diff_messages + phases * others);
  std::uint64_t expected_bytes = 0;
  const auto mine = slice_of(page_words);
  for (int phase = 0; phase < phases; ++phase) {
    for (std::size_t p = 0; p < pages; ++p) {
      if (static_cast<int>(p % static_cast<std::size_t>(n)) == me) continue;
      for (std::size_t i = p * page_words + mine.from; i < p * page_words + mine.to; ++i) {
        expected_bytes += changed_bytes(phase == 0 ? 0 : value(phase - 1, i), value(phase, i));
      }
    }
  }
  EXPECT_EQ(diff_bytes, expected_bytes);
  EXPECT_EQ(first_stale(data, pages * page_words), pages * page_words);
  xsm::free(data);
}

TEST(MultipleWriter, LockedCounterSeesEveryIncrement) {
  constexpr int increments = 20;
  xsm::multiple_writer mw;
  auto* counter = xsm::alloc<word>(page_words, mw);  // one block, homed at node 0
  tsm::lock_array lock(1);
  for (int k = 0; k < increments; ++k) {
    lock.acquire(0);
    counter[0] = counter[0] + 1;
    counter[1 + static_cast<std::size_t>(node())] = static_cast<word>(k + 1);  // a word of its own too
    lock.release(0);
  }
  tsm::barrier();
  const std::uint64_t fetches = mw.fetches.value(), twins = mw.twins.value(), diffs = mw.diffs_sent.value(),
                      invalidations = mw.invalidations.value();
  tsm::barrier();
  // Away from the home: a fetch, a twin and a diff per critical section; the copy is dropped
  // at the next acquire (19 times) and at the barrier.
  const std::uint64_t expected = node() == 0 ? 0 : increments;
  EXPECT_EQ(fetches, expected);
  EXPECT_EQ(twins, expected);
  EXPECT_EQ(diffs, expected);
  EXPECT_EQ(invalidations, expected);
  EXPECT_EQ(counter[0], static_cast<word>(increments) * static_cast<word>(nodes()));
  for (int k = 0; k < nodes(); ++k) EXPECT_EQ(counter[1 + static_cast<std::size_t>(k)], static_cast<word>(increments));
  xsm::free(counter);
}

TEST(MultipleWriter, SharesASegmentAndAProgramWithStache) {
  xsm::multiple_writer mw;
  auto* mem = static_cast<word*>(xsm::alloc_bytes(3 * page, {xsm::range{page, page, &mw}}));
  auto* plain = tsm::alloc<word>(page_words);  // stache, a segment of its own
  EXPECT_EQ(tsm::protocol_at(mem).name(), "stache");
  EXPECT_EQ(tsm::protocol_at(mem + page_words).name(), "multiple-writer");
  EXPECT_EQ(tsm::protocol_at(mem + 2 * page_words).name(), "stache");
  for (int phase = 0; phase < phases; ++phase) {
    write_my_slices(mem + page_words, 1, phase);
    if (node() == 0) mem[0] = static_cast<word>(phase + 1);
    if (node() == nodes() - 1) plain[0] = static_cast<word>(phase + 1);
    tsm::barrier();
  }
  EXPECT_EQ(first_stale(mem + page_words, page_words), page_words);
  EXPECT_EQ(mem[0], static_cast<word>(phases));
  EXPECT_EQ(mem[2 * page_words], 0u);
  EXPECT_EQ(plain[0], static_cast<word>(phases));
  tsm::barrier();
  tsm::free(plain);
  xsm::free(mem);
}

// A 256 KiB block is larger than one message: fetched in parts, its diffs split over messages.
TEST(MultipleWriter, BlocksLargerThanAMessage) {
  constexpr std::size_t block = 256 << 10;
  constexpr std::size_t words = block / sizeof(word);
  xsm::multiple_writer mw;
  auto* data = xsm::alloc<word>(2 * words, mw, {.block_size = block});
  const auto mine = slice_of(words);
  for (int phase = 0; phase < phases; ++phase) {
    for (std::size_t b = 0; b < 2; ++b) {
      for (std::size_t i = b * words + mine.from; i < b * words + mine.to; ++i) data[i] = value(phase, i);
    }
    tsm::barrier();
  }
  const std::uint64_t twins = mw.twins.value(), messages = mw.diff_messages.value();
  tsm::barrier();
  const std::uint64_t elsewhere = nodes() == 1 ? 0 : node() < 2 ? 1 : 2;
  EXPECT_EQ(twins, phases * elsewhere);
  if (nodes() <= 2 && elsewhere > 0) {
    EXPECT_GT(messages, phases * elsewhere);  // a half block each: split
  }
  EXPECT_EQ(first_stale(data, 2 * words), 2 * words);
  xsm::free(data);
}

TEST(MultipleWriter, BlockSizeZeroIsAUsageError) {
  xsm::multiple_writer mw;
  const std::string what = squall::test::usage_error_of([&mw] { (void)xsm::alloc<double>(100, mw, {.block_size = 0}); });
  EXPECT_NE(what.find("xsm::alloc: the block size must be a power of two"), std::string::npos) << what;
  tsm::barrier();
}

TEST(MultipleWriter, SecondBindingIsRefusedAndFreeReleasesTheObject) {
  xsm::multiple_writer mw;
  auto* first = xsm::alloc<word>(page_words, mw);
  const std::string what = squall::test::usage_error_of([&mw] { (void)xsm::alloc<word>(page_words, mw); });
  EXPECT_NE(what.find("make one object per data structure"), std::string::npos) << what;
  tsm::barrier();
  xsm::free(first);
  auto* again = xsm::alloc<word>(page_words, mw);  // free detached it: it may run another
  xsm::free(again);
}

}  // namespace
