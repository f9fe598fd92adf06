// SPDX-License-Identifier: BSD-3-Clause
// Recorded writes (segment_options::recorded_writes, segment::take_written): the same list of
// written blocks whether the kernel records stores or they fault, exact fault and scan
// counts for each, and recording in force wherever it can be (the SIGBUS path on Linux 6.7+,
// unless SQUALL_RECORD_WRITES=0).
#include <gtest/gtest.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <squall/error.hpp>
#include <squall/memory.hpp>
#include <squall/squall.hpp>

#include "test_protocols.hpp"

namespace {

using namespace squall;
using memory::testing::page;
using memory::block_index;
using memory::block_range;
using memory::tag;
using memory::testing::counter_delta;
using memory::testing::touch_read;
using memory::testing::touch_write;


bool kernel_at_least(int major, int minor) {
  utsname u{};
  if (uname(&u) != 0) return false;
  int a = 0, b = 0;
  if (std::sscanf(u.release, "%d.%d", &a, &b) != 2) return false;
  return a > major || (a == major && b >= minor);
}

// Where the kernel must record: the SIGBUS path, Linux 6.7+, not turned off.
bool recording_expected() {
  const char* off = std::getenv("SQUALL_RECORD_WRITES");
  if (off != nullptr && std::string(off) == "0") return false;
  return memory::active_fault_path() == memory::fault_path::sigbus && kernel_at_least(6, 7);
}

class RecordedWrites : public ::testing::Test {
 protected:
  // Blocks [2, 6) of 8 recorded.
  void allocate(std::size_t block_size = page) {
    seg = memory::allocate(8 * block_size, {.block_size = block_size,
                                            .handler = &proto,
                                            .initial = tag::invalid,
                                            .recorded_writes = ranges});
  }
  void TearDown() override { memory::free(seg); }
  std::byte* at(block_index b, std::size_t offset = 0) { return seg.address_of(b) + offset; }
  std::vector<block_index> take(block_index first = 0, block_index end = 8) {
    std::vector<block_index> out(end - first);
    out.resize(seg.take_written(first, end, out));
    return out;
  }

  const block_range ranges[1] = {{2, 6}};
  memory::testing::raise_only proto;
  memory::segment seg;
};

TEST_F(RecordedWrites, RecordedWhereverTheKernelCan) {
  allocate();
  EXPECT_FALSE(seg.writes_recorded(1));
  EXPECT_EQ(seg.writes_recorded(2), recording_expected());
  EXPECT_EQ(seg.writes_recorded(5), recording_expected());
  EXPECT_FALSE(seg.writes_recorded(6));
}

TEST_F(RecordedWrites, SameBlocksListedEitherWayWithExactCounts) {
  allocate();
  const bool recorded = seg.writes_recorded(3);
  touch_write(at(0));  // Invalid: a write fault either way, then ReadWrite
  touch_write(at(3));
  touch_read(at(4));  // ReadOnly
  EXPECT_EQ(take(), (std::vector<block_index>{0, 3}));
  EXPECT_EQ(seg.tag_of(0), tag::read_only);
  EXPECT_EQ(seg.tag_of(3), tag::read_only);

  counter_delta d;
  touch_write(at(3, 7));  // ReadOnly, recorded or faulting
  touch_write(at(4, 9));
  touch_write(at(4, 10));
  touch_read(at(5));
  touch_write(at(0));  // ReadOnly outside the recorded range: always a fault
  EXPECT_EQ(d("memory.faults.write_readonly"), recorded ? 1u : 3u);
  EXPECT_EQ(proto.writes.load(), recorded ? 3 : 5);
  EXPECT_EQ(take(), (std::vector<block_index>{0, 3, 4}));
  EXPECT_EQ(d("memory.writes_recorded"), recorded ? 2u : 0u);
  EXPECT_EQ(d("memory.write_scans"), recorded ? 1u : 0u);
  for (block_index b : {0, 3, 4, 5}) EXPECT_EQ(seg.tag_of(b), tag::read_only) << "block " << b;
  EXPECT_EQ(seg.protocol_view(4)[9], std::byte{1});

  EXPECT_TRUE(take().empty());  // nothing written since
  touch_write(at(4));  // protected again by the last take
  EXPECT_EQ(take(2, 6), (std::vector<block_index>{4}));
  EXPECT_EQ(d("memory.faults.write_readonly"), recorded ? 1u : 4u);
}

TEST_F(RecordedWrites, ReadWriteBlocksAreListedTouchedOrNot) {
  allocate();
  seg.set_tag(2, tag::read_write);  // never touched: no page mapped
  seg.set_tag(7, tag::read_write);
  touch_write(at(3));
  EXPECT_EQ(take(), (std::vector<block_index>{2, 3, 7}));
  EXPECT_EQ(take(), (std::vector<block_index>{}));
  EXPECT_EQ(seg.tag_of(2), tag::read_only);
}

TEST_F(RecordedWrites, BlocksOfSeveralPagesListedOnce) {
  allocate(4 * page);
  touch_read(at(3));
  touch_read(at(4));
  counter_delta d;
  touch_write(at(3, 3 * page));  // the last page only
  touch_write(at(4, 0));
  touch_write(at(4, 2 * page));
  EXPECT_EQ(take(), (std::vector<block_index>{3, 4}));
  if (seg.writes_recorded(3)) {
    EXPECT_EQ(d("memory.writes_recorded"), 2u);
  }
}

TEST_F(RecordedWrites, SystemCallsWritingSharedMemoryAreListed) {
  allocate();
  touch_read(at(3));  // ReadOnly
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const char text[] = "recorded";
  ASSERT_EQ(::write(fds[1], text, sizeof text), static_cast<ssize_t>(sizeof text));
  ASSERT_EQ(::read(fds[0], at(3, 100), sizeof text), static_cast<ssize_t>(sizeof text));
  ::close(fds[0]);
  ::close(fds[1]);
  EXPECT_EQ(take(), (std::vector<block_index>{3}));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(seg.protocol_view(3).data() + 100)), "recorded");
}

TEST_F(RecordedWrites, BadRangesAreRefused) {
  const block_range overlapping[2] = {{1, 4}, {3, 5}};
  EXPECT_THROW(memory::allocate(8 * page, {.recorded_writes = overlapping}), usage_error);
  const block_range beyond[1] = {{6, 9}};
  EXPECT_THROW(memory::allocate(8 * page, {.recorded_writes = beyond}), usage_error);
  const block_range empty[1] = {{2, 2}};
  EXPECT_THROW(memory::allocate(8 * page, {.recorded_writes = empty}), usage_error);
  allocate();
  std::vector<block_index> small(3);
  EXPECT_THROW(seg.take_written(0, 8, small), usage_error);
  EXPECT_THROW(seg.take_written(5, 9, small), usage_error);
}

}  // namespace
