// SPDX-License-Identifier: BSD-3-Clause
// Global segments: one address on every node, block sizes, homes, collective freeing.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include <squall/squall.hpp>
#include <squall/memory.hpp>
#include <squall/stats.hpp>

#include "home_views.hpp"
#include "test_protocols.hpp"

namespace {

using namespace squall;
using memory::testing::page;
using memory::home_policy;
using memory::tag;


// With home views each node maps the others' memory of every segment too.
using squall::test::home_views_on;

// Lines of /proc/self/maps naming a segment's memfd.
int segment_mappings() {
  std::ifstream maps("/proc/self/maps");
  int n = 0;
  for (std::string line; std::getline(maps, line);) n += line.find("squall-segment") != std::string::npos;
  return n;
}

TEST(Segment, HasTheSameAddressOnEveryNode) {
  auto s = memory::allocate(3 * page + 5);
  const auto address = reinterpret_cast<std::uintptr_t>(s.base());
  EXPECT_EQ(allreduce(address, op::min{}), address);
  EXPECT_EQ(allreduce(address, op::max{}), address);
  EXPECT_EQ(s.size(), 4 * page);
  EXPECT_EQ(s.blocks(), 4u);
  EXPECT_EQ(s.block_size(), page);
  memory::free(s);
}

TEST(Segment, BaseIsAlignedToItsBlockSize) {
  auto small = memory::allocate(page);
  auto large = memory::allocate(1 << 20, {.block_size = 64 * 1024});
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(large.base()) % (64 * 1024), 0u);
  EXPECT_EQ(large.blocks(), 16u);
  EXPECT_EQ(large.block_of(large.base() + 3 * 64 * 1024 + 17), 3u);
  EXPECT_EQ(large.address_of(5), large.base() + 5 * 64 * 1024);
  memory::free(small);
  memory::free(large);
}

TEST(Segment, FreeReturnsTheRangeAndTheMemory) {
  const int before = segment_mappings();
  auto s = memory::allocate(1 << 20);
  std::byte* base = s.base();
  std::memset(base, 7, 1 << 20);
  // Application view and protocol view, and the other nodes' memory.
  EXPECT_EQ(segment_mappings(), before + 2 + (home_views_on() ? nodes() - 1 : 0));
  memory::free(s);
  EXPECT_EQ(segment_mappings(), before);
  auto again = memory::allocate(1 << 20);
  EXPECT_EQ(again.base(), base);
  EXPECT_EQ(static_cast<int>(again.base()[100]), 0);  // fresh memory
  memory::free(again);
}

// Over UCX a home without a view here is read one-sidedly (an RMA get) when
// SQUALL_REMOTE_READS=1 (by default not over UCX's TCP lanes, which these tests use).
bool remote_reads_on() {
  const char* t = std::getenv("SQUALL_TRANSPORT");
  const char* r = std::getenv("SQUALL_REMOTE_READS");
  return t != nullptr && std::strcmp(t, "ucx") == 0 && r != nullptr && std::strcmp(r, "1") == 0;
}

// segment::copy_from_home: a block's bytes straight from its home's memory on this host (or
// by a one-sided read over UCX when SQUALL_HOME_VIEWS=0), no message sent, and what the home
// writes later is what the next copy reads; a node's own blocks, or every block with neither,
// are not copied.
TEST(Segment, CopyFromHomeReadsTheHomesMemoryWithoutAMessage) {
  const int n = nodes(), me = node();
  memory::testing::raise_only proto;
  auto s = memory::allocate(4 * static_cast<std::size_t>(n) * page, {.handler = &proto, .initial = tag::invalid});
  auto write_mine = [&](std::uint8_t round) {
    for (memory::block_index b = 0; b < s.blocks(); ++b) {
      if (s.home(b) == me) std::memset(s.protocol_view(b).data(), round + static_cast<int>(b), page);
    }
    barrier();
  };
  for (std::uint8_t round : {1, 7}) {
    write_mine(round);
    const stats::snapshot before = stats::take();
    std::size_t copied = 0;
    for (memory::block_index b = 0; b < s.blocks(); ++b) {
      const bool copies = s.copy_from_home(b);
      if (s.home(b) == me || (!home_views_on() && !remote_reads_on())) {
        EXPECT_FALSE(copies) << "block " << b;
        continue;
      }
      ASSERT_TRUE(copies) << "block " << b << " homed at node " << s.home(b);
      ++copied;
      const auto bytes = s.protocol_view(b);
      EXPECT_EQ(static_cast<int>(bytes[0]), static_cast<std::uint8_t>(round + b)) << "block " << b;
      EXPECT_EQ(static_cast<int>(bytes[page - 1]), static_cast<std::uint8_t>(round + b)) << "block " << b;
      EXPECT_EQ(s.tag_of(b), tag::invalid);
    }
    const stats::snapshot after = stats::take();
    EXPECT_EQ(after.get("memory.home_copies") - before.get("memory.home_copies"), copied);
    EXPECT_EQ(after.get("memory.remote_reads") - before.get("memory.remote_reads"), home_views_on() ? 0 : copied);
    EXPECT_EQ(after.get("am.messages_sent") - before.get("am.messages_sent"), 0u);
    EXPECT_EQ(after.get("memory.home_views_refused"), 0u);
    barrier();
  }
  memory::free(s);
}

// segment::home_word: with segment_options::home_words every block has one word, at its home,
// that every node of the host reaches (all nodes of these tests share one host): each node adds
// its number + 1 to every block's word, and each then holds the sum. A segment made without
// them, a job of one node and SQUALL_HOME_VIEWS=0 have none.
TEST(Segment, HomeWordsAreOneWordPerBlockThatTheNodesOfAHostShare) {
  const int n = nodes();
  auto s = memory::allocate(3 * static_cast<std::size_t>(n) * page, {.home_words = true});
  auto without = memory::allocate(page);
  EXPECT_EQ(without.home_word(0), nullptr);
  const bool on = n > 1 && home_views_on();
  for (memory::block_index b = 0; b < s.blocks(); ++b) {
    std::atomic<std::uint64_t>* word = s.home_word(b);
    if (!on) {
      EXPECT_EQ(word, nullptr) << "block " << b;
      continue;
    }
    ASSERT_NE(word, nullptr) << "block " << b;
    EXPECT_EQ(word->load(), 0u);
  }
  barrier();
  for (memory::block_index b = 0; on && b < s.blocks(); ++b) s.home_word(b)->fetch_add(static_cast<std::uint64_t>(node() + 1));
  barrier();
  for (memory::block_index b = 0; on && b < s.blocks(); ++b) {
    EXPECT_EQ(s.home_word(b)->load(), static_cast<std::uint64_t>(n * (n + 1) / 2)) << "block " << b;
  }
  barrier();
  memory::free(without);
  memory::free(s);
}

TEST(Segment, HomesFollowThePolicy) {
  const int n = nodes();
  auto rr = memory::allocate(10 * page);
  auto part = memory::allocate(10 * page, {.homes = home_policy::partition()});
  auto fn = memory::allocate(10 * page, {.homes = home_policy::function([n](memory::block_index b) {
                                           return static_cast<int>((b * 7 + 3) % static_cast<std::size_t>(n));
                                         })});
  const std::size_t per_node = (10 + static_cast<std::size_t>(n) - 1) / static_cast<std::size_t>(n);
  for (memory::block_index b = 0; b < 10; ++b) {
    EXPECT_EQ(rr.home(b), static_cast<int>(b % static_cast<std::size_t>(n)));
    EXPECT_EQ(part.home(b), static_cast<int>(b / per_node));
    EXPECT_EQ(fn.home(b), static_cast<int>((b * 7 + 3) % static_cast<std::size_t>(n)));
  }
  memory::free(rr);
  memory::free(part);
  memory::free(fn);
}

TEST(Segment, IsPlainMemoryByDefault) {
  auto s = memory::allocate(4 * page);
  memory::testing::counter_delta d;
  for (memory::block_index b = 0; b < 4; ++b) EXPECT_EQ(s.tag_of(b), tag::read_write);
  s.base()[page + 1] = std::byte{42};
  EXPECT_EQ(s.protocol_view(1)[1], std::byte{42});
  s.protocol_view(2)[0] = std::byte{9};
  EXPECT_EQ(s.base()[2 * page], std::byte{9});
  EXPECT_EQ(d("memory.faults.read_invalid") + d("memory.faults.write_invalid") +
                d("memory.faults.write_readonly"),
            0u);
  EXPECT_EQ(d("memory.mapped_on_touch"), 2u);  // blocks 1 and 2, on first touch
  memory::free(s);
}

TEST(Segment, SegmentOfFindsTheSegment) {
  auto a = memory::allocate(2 * page);
  auto b = memory::allocate(2 * page);
  EXPECT_EQ(memory::segment_of(a.base() + page), a);
  EXPECT_EQ(memory::segment_of(b.base()), b);
  memory::free(a);
  memory::free(b);
}

TEST(Segment, MismatchedAllocationIsReportedOnEveryNode) {
  if (nodes() == 1) GTEST_SKIP() << "needs two nodes";
  EXPECT_THROW(memory::allocate(node() == 0 ? 2 * page : page), usage_error);
  auto s = memory::allocate(page);  // the failed call left the nodes in step
  memory::free(s);
}

TEST(Segment, BadHomeIsReportedOnEveryNode) {
  const int me = node();
  EXPECT_THROW(memory::allocate(4 * page, {.homes = home_policy::function([me](memory::block_index b) {
                                             return b == 2 && me == 0 ? -1 : 0;
                                           })}),
               usage_error);
  auto s = memory::allocate(page);
  memory::free(s);
}

// Private pages of this process at `address`, holding `fill`: what adopt takes over (the
// same address on every node, as the program's data is when its layout is identical).
std::byte* private_pages(std::uintptr_t address, std::size_t bytes, std::uint8_t fill) {
  void* p = ::mmap(reinterpret_cast<void*>(address), bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  EXPECT_EQ(p, reinterpret_cast<void*>(address));
  std::memset(p, fill, bytes);
  return static_cast<std::byte*>(p);
}
// Outside the segment range; under TSan, in the low range it lets programs map.
#if defined(SQUALL_TSAN)
constexpr std::uintptr_t adopt_at = 0x7f'0000'0000;
#else
constexpr std::uintptr_t adopt_at = 0x3f0000000000;
#endif

TEST(Segment, AdoptKeepsTheBytesAndFreeLeavesThemPrivate) {
  std::byte* pages = private_pages(adopt_at, 4 * page, 0x5a);
  memory::testing::raise_only proto;
  const int before = segment_mappings();
  auto s = memory::adopt(pages, 4 * page, {.handler = &proto, .initial = tag::invalid});
  EXPECT_EQ(s.base(), pages);
  EXPECT_EQ(memory::segment_of(pages + page), s);
  EXPECT_EQ(segment_mappings(), before + 2 + (home_views_on() ? nodes() - 1 : 0));
  EXPECT_EQ(static_cast<int>(s.protocol_view(3)[7]), 0x5a);  // the bytes, before any access
  EXPECT_EQ(static_cast<int>(pages[2 * page + 1]), 0x5a);    // through a read fault
  EXPECT_EQ(proto.reads.load(), 1);
  pages[2 * page + 1] = std::byte{0x11};
  EXPECT_EQ(proto.writes.load(), 1);
  memory::free(s);
  EXPECT_EQ(segment_mappings(), before);
  EXPECT_THROW(memory::segment_of(pages), usage_error);
  EXPECT_EQ(static_cast<int>(pages[2 * page + 1]), 0x11);  // private again, with the last bytes
  EXPECT_EQ(static_cast<int>(pages[0]), 0x5a);
  pages[0] = std::byte{1};  // and plain memory: no fault handler runs
  EXPECT_EQ(proto.reads.load() + proto.writes.load(), 2);
  ::munmap(pages, 4 * page);
}

TEST(Segment, AdoptNeedsTheSameAddressEverywhereAndWholeBlocks) {
  const std::uintptr_t mine = adopt_at + static_cast<std::uintptr_t>(nodes() > 1 ? node() : 0) * 16 * page;
  std::byte* pages = private_pages(mine, 4 * page, 0);
  if (nodes() > 1) {
    try {
      memory::adopt(pages, 4 * page);
      ADD_FAILURE() << "adopt at different addresses was accepted";
    } catch (const usage_error& e) {
      EXPECT_NE(std::string(e.what()).find("not at the same address on every node"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(memory::adopt(pages + 1, page), usage_error);
  EXPECT_THROW(memory::adopt(pages, 3 * page, {.block_size = 2 * page}), usage_error);
  auto s = memory::allocate(page);  // the failed calls left the nodes in step
  EXPECT_THROW(memory::adopt(s.base(), page), usage_error);
  memory::free(s);
  ::munmap(pages, 4 * page);
}

}  // namespace
