// SPDX-License-Identifier: BSD-3-Clause
// The shared heap: any node allocates without the others; every node sees the memory at the
// same address; allocations never overlap, large ones start on block boundaries; freed space
// is reused; bad frees and a full heap are reported, and so are nodes whose
// SQUALL_TSM_HEAP_MIB differ.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>

namespace {

using namespace squall;

void ensure_heap() {
  if (!tsm::initialized()) tsm::init();  // collective: every node reaches this first in the same test
}

// First, before any test makes the heap. Nodes started with different SQUALL_TSM_HEAP_MIB (one
// host's environment not another's) are told so on every node, and nothing is built. Before,
// the message was "memory::allocate is collective: nodes asked for different segments".
TEST(Heap, HeapSizesThatDifferBetweenNodesAreNamed) {
  if (nodes() < 2) GTEST_SKIP() << "needs two nodes";
  if (tsm::initialized()) GTEST_SKIP() << "the heap was made already (tests run in another order)";
  const char* was = std::getenv("SQUALL_TSM_HEAP_MIB");
  const std::string saved = was != nullptr ? was : "";
  ::setenv("SQUALL_TSM_HEAP_MIB", node() == 0 ? "64" : "32", 1);
  std::string what = "(no usage_error)";
  try {
    tsm::init();
  } catch (const usage_error& e) {
    what = e.what();
  }
  if (was != nullptr) {
    ::setenv("SQUALL_TSM_HEAP_MIB", saved.c_str(), 1);
  } else {
    ::unsetenv("SQUALL_TSM_HEAP_MIB");
  }
  const std::string expected = std::string("tsm::init: SQUALL_TSM_HEAP_MIB differs between nodes (from 32 to ") +
                               "64 MiB; this node: " + (node() == 0 ? "64" : "32") + ")";
  EXPECT_NE(what.find(expected), std::string::npos)
      << what;
  EXPECT_FALSE(tsm::initialized());
  tsm::barrier();
}

// Run alone by tsm_test.heap_no_room, with a segment range of 2 GiB (SQUALL_SEGMENT_SPACE_GIB):
// the heap and the placed heap of 1 GiB each do not both fit. A failed tsm::init leaves
// nothing made, and a second one with a smaller heap works. (The heap was kept once the
// placed heap failed: tsm::initialized() said true and tsm::malloc crashed.)
TEST(HeapNoRoom, AFailedInitLeavesNothingAndMayBeTriedAgain) {
  const char* range_gib = std::getenv("SQUALL_SEGMENT_SPACE_GIB");
  if (range_gib == nullptr || std::string(range_gib) != "2") GTEST_SKIP() << "run by tsm_test.heap_no_room";
  ASSERT_FALSE(tsm::initialized());
  ::setenv("SQUALL_TSM_HEAP_MIB", "1024", 1);
  std::string what = "(no usage_error)";
  try {
    tsm::init();
  } catch (const usage_error& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("no room for"), std::string::npos) << what;
  EXPECT_FALSE(tsm::initialized());
  EXPECT_THROW(tsm::malloc(8), usage_error);  // "called before tsm::init", not a crash
  ::setenv("SQUALL_TSM_HEAP_MIB", "256", 1);
  tsm::init();
  ASSERT_TRUE(tsm::initialized());
  auto* p = static_cast<int*>(tsm::malloc(sizeof(int), nodes() - 1));
  *p = node();
  tsm::barrier();
  tsm::heap_free(p);
  tsm::barrier();
}

TEST(Heap, OneNodeAllocatesEveryNodeReads) {
  ensure_heap();
  std::uintptr_t where = 0;
  if (node() == 0) {
    auto* p = static_cast<std::uint64_t*>(tsm::malloc(1000 * sizeof(std::uint64_t)));
    for (int i = 0; i < 1000; ++i) p[i] = static_cast<std::uint64_t>(i) * 3;
    where = reinterpret_cast<std::uintptr_t>(p);
  }
  broadcast(where);
  const auto* p = reinterpret_cast<const std::uint64_t*>(where);
  std::uint64_t sum = 0;
  for (int i = 0; i < 1000; ++i) sum += p[i];
  EXPECT_EQ(sum, 3u * 999 * 1000 / 2);
  tsm::barrier();
  if (node() == 0) tsm::heap_free(const_cast<std::uint64_t*>(p));
  tsm::barrier();
}

struct range {
  std::uint64_t start, size;
  auto operator<=>(const range&) const = default;
};

TEST(Heap, AllocationsFromEveryNodeNeverOverlap) {
  ensure_heap();
  constexpr int per_node = 40;
  std::vector<range> mine;
  for (int i = 0; i < per_node; ++i) {
    const std::size_t size = 8 + static_cast<std::size_t>((node() * 131 + i * 977) % 20000);
    auto* p = static_cast<std::byte*>(tsm::malloc(size));
    if (size >= 4096) {
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 4096, 0u) << size;
    }
    mine.push_back({reinterpret_cast<std::uintptr_t>(p), size});
  }
  // Everyone's ranges: each node broadcasts its list in turn (all lists have one length).
  std::vector<range> all;
  for (int who = 0; who < nodes(); ++who) {
    std::vector<range> theirs = mine;
    broadcast(std::span(theirs), who);
    all.insert(all.end(), theirs.begin(), theirs.end());
  }
  std::sort(all.begin(), all.end());
  for (std::size_t i = 1; i < all.size(); ++i) {
    EXPECT_LE(all[i - 1].start + all[i - 1].size, all[i].start) << "allocations " << i - 1 << " and " << i << " overlap";
  }
  tsm::barrier();
  for (const range& r : mine) tsm::heap_free(reinterpret_cast<void*>(r.start));
  tsm::barrier();
}

TEST(Heap, FreedSpaceIsReused) {
  ensure_heap();
  if (node() == 0) {
    void* a = tsm::malloc(100000);
    tsm::heap_free(a);
    void* b = tsm::malloc(100000);
    EXPECT_EQ(a, b);
    tsm::heap_free(b);
  }
  tsm::barrier();
}

TEST(Heap, PlacedAllocationsAreHomedWhereAsked) {
  ensure_heap();
  const int home = (node() + 1) % nodes();
  auto* p = static_cast<std::byte*>(tsm::malloc(3 * 4096 + 100, home));
  const memory::segment s = memory::segment_of(p);
  for (std::size_t off = 0; off < 3 * 4096 + 100; off += 4096) EXPECT_EQ(s.home(s.block_of(p + off)), home);
  p[5] = std::byte{9};  // usable like any TSM memory
  EXPECT_EQ(static_cast<int>(p[5]), 9);
  barrier();
  tsm::heap_free(p);
  EXPECT_THROW(tsm::malloc(8, nodes()), usage_error);
  EXPECT_THROW(tsm::malloc(8, -1), usage_error);
}

TEST(Heap, MistakesAreReported) {
  ensure_heap();
  int local = 0;
  EXPECT_THROW(tsm::heap_free(&local), usage_error);
  if (node() == 0) {
    void* p = tsm::malloc(64);
    tsm::heap_free(p);
    EXPECT_THROW(tsm::heap_free(p), usage_error);  // twice
    EXPECT_THROW(tsm::malloc(std::size_t{1} << 40), usage_error);  // larger than the heap
  }
  EXPECT_THROW(tsm::init(), usage_error);  // once only
  tsm::barrier();
}

// As free(NULL): nothing to free, no error (tsm::free is collective, and every node passes null).
TEST(Heap, FreeingNullDoesNothing) {
  ensure_heap();
  EXPECT_NO_THROW(tsm::heap_free(nullptr));
  EXPECT_NO_THROW(tsm::free(nullptr));
  tsm::barrier();
}

}  // namespace
