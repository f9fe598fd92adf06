// SPDX-License-Identifier: BSD-3-Clause
// Protocols chosen by name (tsm::options::protocol): the shared heap of tsm::init under the
// multiple-writer protocol, nodes writing their own slices of tsm::malloc'd pages between
// barriers, with exact counts; an unknown name is a usage_error listing the known ones, and
// nodes naming different ones are refused on every node.
//
// Linked to libtsm only, as a PARMACS program is: libtsm loads libsquall-xsm itself when a
// name it does not know is asked for, so the counts are read from the statistics table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include <squall/squall.hpp>
#include <squall/stats.hpp>
#include <squall/tsm.hpp>
#include <squall/tsm/protocol.hpp>

#include "home_views.hpp"
#include "slices.hpp"

namespace {

using namespace squall;
using word = std::uint64_t;

constexpr std::size_t page = 4096;
constexpr std::size_t page_words = page / sizeof(word);
constexpr int phases = 3;

void heap_under_multiple_writer() {
  if (!tsm::initialized()) tsm::init({.protocol = "multiple-writer"});
}

word value(int phase, std::size_t i) { return static_cast<word>(phase + 1) * 0x9E3779B97F4A7C15ull + i * 0x100000001B3ull; }

std::uint64_t changed_bytes(word was, word now) {
  std::uint64_t n = 0;
  for (int k = 0; k < 8; ++k) n += ((was >> (8 * k)) & 0xff) != ((now >> (8 * k)) & 0xff);
  return n;
}

// This node's multiple-writer totals, and the messages it sent to the protocol's handlers.
struct mw_counts {
  std::uint64_t fetches, direct, served, twins, diffs, diff_messages, diff_bytes, applied, invalidations, messages;
  std::uint64_t remote_reads;  // the memory layer's one-sided reads (UCX)
};
mw_counts take_counts() {
  const stats::snapshot s = stats::take();
  mw_counts c{s.get("xsm.multiple_writer.fetches"),       s.get("xsm.multiple_writer.fetches_direct"),
              s.get("xsm.multiple_writer.fetches_served"),
              s.get("xsm.multiple_writer.twins"),         s.get("xsm.multiple_writer.diffs_sent"),
              s.get("xsm.multiple_writer.diff_messages"), s.get("xsm.multiple_writer.diff_bytes"),
              s.get("xsm.multiple_writer.diffs_applied"), s.get("xsm.multiple_writer.invalidations"),
              0,                                          s.get("memory.remote_reads")};
  for (const auto& h : s.handlers) {
    if (std::string_view(h.name).find("multiple_writer::on_") != std::string_view::npos) c.messages += h.sent;
  }
  return c;
}

TEST(ProtocolByName, BothHeapsRunTheProtocolInitNamed) {
  heap_under_multiple_writer();
  void* shared = tsm::malloc(100);
  void* placed = tsm::malloc(100, nodes() - 1);
  EXPECT_EQ(tsm::protocol_at(shared).name(), "multiple-writer");
  EXPECT_EQ(tsm::protocol_at(placed).name(), "multiple-writer");
  EXPECT_THROW((void)tsm::counts_of(shared), usage_error);  // stache's counts only
  tsm::heap_free(shared);
  tsm::heap_free(placed);
  tsm::barrier();
}

TEST(ProtocolByName, SlicesOfHeapPagesMergeAtBarriers) {
  const std::size_t pages = std::max<std::size_t>(8, static_cast<std::size_t>(nodes()));  // every node homes one
  heap_under_multiple_writer();
  word* data = nullptr;
  if (node() == 0) data = static_cast<word*>(tsm::malloc(pages * page));  // starts on a block
  broadcast(data);
  tsm::barrier();  // the allocation's size word, written by node 0, is home
  const mw_counts before = take_counts();
  tsm::barrier();  // no node fetches from one that has not taken its counts yet
  const auto slice = squall::test::slice_of(page_words);  // covers the page on any node count
  for (int phase = 0; phase < phases; ++phase) {
    for (std::size_t p = 0; p < pages; ++p) {
      for (std::size_t i = p * page_words + slice.from; i < p * page_words + slice.to; ++i) data[i] = value(phase, i);
    }
    tsm::barrier();
  }
  const mw_counts after = take_counts();
  tsm::barrier();  // a home's last answers, sent as the last phase's barrier ended, are counted now
  const std::uint64_t messages = take_counts().messages - before.messages;
  tsm::barrier();  // every node has its counts before any reads the data below

  const memory::segment heap = memory::segment_of(data);
  const int n = nodes(), me = node();
  std::uint64_t homed_here = 0, expected_bytes = 0;
  for (std::size_t p = 0; p < pages; ++p) {
    const bool mine = heap.home(heap.block_of(data + p * page_words)) == me;
    homed_here += mine;
    for (int phase = 0; phase < phases && !mine; ++phase) {
      for (std::size_t i = p * page_words + slice.from; i < p * page_words + slice.to; ++i) {
        expected_bytes += changed_bytes(phase == 0 ? 0 : value(phase - 1, i), value(phase, i));
      }
    }
  }
  const std::uint64_t elsewhere = pages - homed_here, others = static_cast<std::uint64_t>(n - 1);
  // With home views, or UCX's one-sided reads, a fetch copies the home's memory, and no home
  // serves one.
  const bool views = squall::test::copies_from_home(after.remote_reads - before.remote_reads);
  // Each phase: a fetch, a twin and a diff for each page homed elsewhere, the copy dropped
  // at the barrier; one diff message to each other home, answered once.
  EXPECT_EQ(after.fetches - before.fetches, phases * elsewhere);
  EXPECT_EQ(after.direct - before.direct, views ? phases * elsewhere : 0);
  EXPECT_EQ(after.twins - before.twins, phases * elsewhere);
  EXPECT_EQ(after.diffs - before.diffs, phases * elsewhere);
  EXPECT_EQ(after.invalidations - before.invalidations, phases * elsewhere);
  EXPECT_EQ(after.diff_messages - before.diff_messages, phases * others);
  EXPECT_EQ(after.served - before.served, views ? 0 : phases * homed_here * others);
  EXPECT_EQ(after.applied - before.applied, phases * homed_here * others);
  EXPECT_EQ(after.diff_bytes - before.diff_bytes, expected_bytes);
  // A fetch by message and its copy; a diff message and its answer (every node homes one of
  // the pages).
  EXPECT_EQ(messages, (after.fetches - before.fetches) - (after.direct - before.direct) +
                          (after.served - before.served) + (after.diff_messages - before.diff_messages) +
                          phases * others);
  std::size_t stale = 0;  // counted, not ASSERTed: a failure must still reach the barrier and free
  for (std::size_t i = 0; i < pages * page_words; ++i) stale += data[i] != value(phases - 1, i);
  EXPECT_EQ(stale, 0u);
  tsm::barrier();  // every node has read the data before it is freed
  if (node() == 0) tsm::heap_free(data);
}

TEST(ProtocolByName, AnUnknownNameIsAUsageErrorListingTheKnownOnes) {
  try {
    (void)tsm::alloc_bytes(page, {.protocol = "no-such-protocol"});
    FAIL() << "no usage_error";
  } catch (const usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("tsm::alloc: no protocol is named 'no-such-protocol'; known: stache, "
                                         "multiple-writer"),
              std::string::npos)
        << e.what();
  }
  const auto other = tsm::make_protocol("multiple-writer");
  const tsm::range_binding range{0, page, other.get()};
  EXPECT_THROW((void)tsm::alloc_bound(2 * page, {&range, 1}, {.protocol = "multiple-writer"}), usage_error);
  EXPECT_THROW((void)tsm::make_protocol("stache"), usage_error);
  EXPECT_THROW(tsm::register_protocol_maker("multiple-writer", [] { return tsm::make_protocol("multiple-writer"); }),
               usage_error);
}

// Nodes naming different protocols for one segment are refused on every node before anything
// is built. Before, each node ran its own, and the job ended at the first stache message with
// "a message for protocol ... stache arrived for block ..., which protocol 'multiple-writer'
// ... runs here".
TEST(ProtocolByName, NodesNamingDifferentProtocolsAreRefusedOnEveryNode) {
  if (nodes() < 2) GTEST_SKIP() << "needs two nodes";
  try {
    (void)tsm::alloc_bytes(nodes() * page, {.protocol = node() == 0 ? "stache" : "multiple-writer"});
    FAIL() << "no usage_error";
  } catch (const usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("tsm::alloc is collective: nodes gave its blocks different protocols (this "
                                         "node: " +
                                         std::string(node() == 0 ? "stache" : "multiple-writer") + " for blocks 0 to " +
                                         std::to_string(nodes())),
              std::string::npos)
        << e.what();
  }
  // Nothing was left half-made: the nodes go on with a segment they agree on.
  auto* data = static_cast<word*>(tsm::alloc_bytes(nodes() * page));
  data[static_cast<std::size_t>(node()) * page_words] = static_cast<word>(node()) + 1;
  tsm::barrier();
  for (int k = 0; k < nodes(); ++k) EXPECT_EQ(data[static_cast<std::size_t>(k) * page_words], static_cast<word>(k) + 1);
  tsm::barrier();
  tsm::free(data);
}

}  // namespace
