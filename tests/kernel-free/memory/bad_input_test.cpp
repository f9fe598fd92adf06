// SPDX-License-Identifier: BSD-3-Clause
// Misuse of the memory API ends in a clear message: usage_error for bad arguments, a fatal
// message from the fault path. One node; death tests run in a fresh process each.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <squall/squall.hpp>
#include <squall/memory.hpp>

#include "test_protocols.hpp"

namespace {

using namespace squall;
using memory::testing::page;
using memory::tag;


class runtime_environment : public ::testing::Environment {
 public:
  void SetUp() override {
    // Each death test in a fresh process (not a fork): the memory layer starts once per
    // process, and a forked child would share the parent's userfaultfd.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    squall::init();
  }
  void TearDown() override { squall::finalize(); }
};
const auto* const environment = ::testing::AddGlobalTestEnvironment(new runtime_environment);

// Runs f, which must throw usage_error with `text` in its message.
template <class F>
void expect_usage_error(F&& f, const std::string& text) {
  try {
    f();
    ADD_FAILURE() << "no usage_error; expected one saying '" << text << "'";
  } catch (const usage_error& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(BadInput, BlockSizeThatIsNotAPowerOfTwoMultipleOfThePage) {
  for (std::size_t size : {3 * page, page / 2, page + 1, 6 * page}) {
    expect_usage_error([&] { memory::allocate(1 << 20, {.block_size = size}); },
                       "is not a power-of-two multiple of the page size");
  }
}

TEST(BadInput, EmptySegment) {
  expect_usage_error([] { memory::allocate(0); }, "at least one byte");
}

TEST(BadInput, ConcurrentFaultThreadsOutOfRange) {
  EXPECT_THROW(memory::expect_concurrent_faults(0), usage_error);
  EXPECT_THROW(memory::expect_concurrent_faults(65), usage_error);
  EXPECT_NO_THROW(memory::expect_concurrent_faults(1));
}

TEST(BadInput, AddressOutsideEverySegment) {
  auto s = memory::allocate(2 * page);
  int local = 0;
  expect_usage_error([&] { memory::segment_of(&local); }, "is outside every shared segment");
  expect_usage_error([&] { memory::segment_of(s.base() + 2 * page); }, "is outside every shared segment");
  expect_usage_error([&] { s.block_of(&local); }, "is outside the segment");
  memory::free(s);
}

TEST(BadInput, BlockOutOfRange) {
  auto s = memory::allocate(2 * page);
  expect_usage_error([&] { s.set_tag(2, tag::invalid); }, "block 2 is out of range");
  expect_usage_error([&] { s.protocol_view(7); }, "out of range");
  memory::free(s);
}

TEST(BadInput, InstallOfTheWrongSize) {
  auto s = memory::allocate(2 * page);
  std::vector<std::byte> data(100);
  expect_usage_error([&] { s.install(0, data, tag::read_only); }, "100 bytes given for a block of 4096");
  memory::free(s);
}

TEST(BadInput, TagChangeOnAFreedSegment) {
  auto s = memory::allocate(2 * page);
  memory::free(s);
  expect_usage_error([&] { s.set_tag(0, tag::read_only); }, "segment::set_tag on a segment that was freed");
  expect_usage_error([&] { s.tag_of(0); }, "was freed");
  expect_usage_error([&] { memory::free(s); }, "was freed");
  auto again = memory::allocate(2 * page);  // same slot, same address: the old handle stays dead
  expect_usage_error([&] { s.base(); }, "was freed");
  memory::free(again);
}

TEST(BadInput, NullSegmentHandle) {
  memory::segment s;
  expect_usage_error([&] { s.set_tag(0, tag::invalid); }, "null segment handle");
}

// The segment range is reserved without access: touching it where no segment is ends the
// node with a message naming the cause, not a bare segmentation fault.
TEST(BadInputDeathTest, AccessToAFreedSegment) {
  EXPECT_DEATH(
      {
        auto s = memory::allocate(2 * page);
        volatile char* p = reinterpret_cast<char*>(s.base());
        p[0] = 1;
        memory::free(s);
        p[0] = 2;
      },
      "access to 0x[0-9a-f]+, in the shared-segment range but in no segment \\(memory that was freed");
}

struct lazy_protocol : memory::protocol {
  void read_fault(memory::segment, memory::block_index) override {}
  void write_fault(memory::segment s, memory::block_index b) override { s.set_tag(b, tag::read_only); }
};

TEST(BadInputDeathTest, ReadHandlerThatDoesNotRaiseTheTag) {
  EXPECT_EXIT(
      {
        lazy_protocol p;
        auto s = memory::allocate(2 * page, {.handler = &p, .initial = tag::invalid});
        memory::testing::touch_read(s.address_of(1));
      },
      ::testing::ExitedWithCode(1),
      "the read fault handler returned without raising the tag of block 1 .*tag Invalid");
}

TEST(BadInputDeathTest, WriteHandlerThatRaisesTheTagOnlyToReadOnly) {
  EXPECT_EXIT(
      {
        lazy_protocol p;
        auto s = memory::allocate(2 * page, {.handler = &p, .initial = tag::invalid});
        memory::testing::touch_write(s.base());
      },
      ::testing::ExitedWithCode(1), "the write fault handler returned without raising the tag of block 0 .*ReadOnly");
}

TEST(BadInputDeathTest, FaultWithoutAProtocol) {
  EXPECT_EXIT(
      {
        auto s = memory::allocate(2 * page, {.initial = tag::read_only});
        memory::testing::touch_write(s.base());
      },
      ::testing::ExitedWithCode(1), "write of block 0 .* faulted \\(tag ReadOnly\\), but no protocol is bound");
}

struct throwing_protocol : memory::protocol {
  void read_fault(memory::segment, memory::block_index) override { throw std::runtime_error("boom in read"); }
  void write_fault(memory::segment, memory::block_index) override { throw std::runtime_error("boom in write"); }
};

// Before, the node ended through std::terminate, saying only "boom": not whose it was.
TEST(BadInputDeathTest, HandlerThatThrows) {
  EXPECT_EXIT(
      {
        throwing_protocol p;
        auto s = memory::allocate(2 * page, {.handler = &p, .initial = tag::invalid});
        memory::testing::touch_write(s.address_of(1));
      },
      ::testing::ExitedWithCode(1),
      "the protocol's write fault handler threw for block 1 of the segment at 0x[0-9a-f]+: boom in write "
      "\\(a fault handler cannot throw to the faulting access");
  EXPECT_EXIT(
      {
        throwing_protocol p;
        auto s = memory::allocate(2 * page, {.handler = &p, .initial = tag::invalid});
        memory::testing::touch_read(s.base());
      },
      ::testing::ExitedWithCode(1), "the protocol's read fault handler threw for block 0 .*: boom in read");
}

struct app_view_toucher : memory::protocol {
  void read_fault(memory::segment s, memory::block_index b) override {
    memory::testing::touch_read(s.address_of(b + 1));  // wrong: must use protocol_view
    s.set_tag(b, tag::read_only);
  }
  void write_fault(memory::segment s, memory::block_index b) override { s.set_tag(b, tag::read_write); }
};

TEST(BadInputDeathTest, HandlerTouchingTheApplicationView) {
  if (memory::active_fault_path() != memory::fault_path::sigbus) {
    GTEST_SKIP() << "on the thread path the handler thread would wait for itself";
  }
#if defined(SQUALL_TSAN)
  GTEST_SKIP() << "TSan delivers a SIGBUS raised inside the SIGBUS handler as the default action";
#endif
  EXPECT_EXIT(
      {
        app_view_toucher p;
        auto s = memory::allocate(2 * page, {.handler = &p, .initial = tag::invalid});
        memory::testing::touch_read(s.base());
      },
      ::testing::ExitedWithCode(1), "a fault handler touched the application view .*must use the protocol view");
}

// Code under the node lock (here a wait_until predicate) must not touch an application view:
// its fault could not be served, so it ends with a message (on the thread path too, where
// the fault thread would otherwise wait for the lock forever).
TEST(BadInputDeathTest, FaultUnderTheNodeLock) {
  EXPECT_EXIT(
      {
        memory::testing::raise_only p;
        auto s = memory::allocate(2 * page, {.handler = &p, .initial = tag::invalid});
        am::wait_until([&] { return *reinterpret_cast<volatile char*>(s.address_of(1)) == 0; });
      },
      ::testing::ExitedWithCode(1), "a read of block 1 .* faulted while its thread held the node lock");
}

}  // namespace
