// Global segments: one address on every node, block sizes, homes, collective freeing.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include <squall/squall.hpp>
#include <squall/memory.hpp>

#include "test_protocols.hpp"

namespace {

using namespace squall;
using memory::home_policy;
using memory::tag;

constexpr std::size_t page = 4096;

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
  EXPECT_EQ(segment_mappings(), before + 2);  // application view and protocol view
  memory::free(s);
  EXPECT_EQ(segment_mappings(), before);
  auto again = memory::allocate(1 << 20);
  EXPECT_EQ(again.base(), base);
  EXPECT_EQ(static_cast<int>(again.base()[100]), 0);  // fresh memory
  memory::free(again);
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

}  // namespace
