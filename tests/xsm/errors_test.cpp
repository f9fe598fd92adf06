// SPDX-License-Identifier: BSD-3-Clause
// Bad bindings are clear errors, and a protocol message that reaches the wrong protocol or a
// freed segment ends the job naming both, never an unchecked cast (one node; the messages
// are sent to itself; each death test in a fresh process).
#include <gtest/gtest.h>

#include <cstdint>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>
#include <squall/xsm.hpp>

#include "migratory.hpp"
#include "usage_error_of.hpp"

namespace {

using namespace squall;
using migratory_example::migratory;

class runtime_environment : public ::testing::Environment {
 public:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");  // the memory layer starts once per process
    squall::init();
  }
  void TearDown() override { squall::finalize(); }
};
const auto* const environment = ::testing::AddGlobalTestEnvironment(new runtime_environment);

// A protocol that takes only 64 KiB blocks.
class big_blocks_only final : public xsm::protocol {
 public:
  std::string_view name() const override { return "big-blocks-only"; }
  std::string refuse_block_size(std::size_t block_size) const override {
    return block_size == 65536 ? std::string() : std::string("it keeps 64 KiB blocks only");
  }
  void attach(xsm::block_index, xsm::block_index, std::size_t) override {}
  void read_fault(xsm::segment s, xsm::block_index b) override { s.set_tag(b, xsm::tag::read_write); }
  void write_fault(xsm::segment s, xsm::block_index b) override { s.set_tag(b, xsm::tag::read_write); }
};

using squall::test::usage_error_of;

TEST(Bindings, OverlappingRangesAreRefused) {
  migratory a, b;
  EXPECT_NE(usage_error_of([&] { xsm::alloc_bytes(4 * 4096, {xsm::range{0, 2 * 4096, &a}, xsm::range{4096, 4096, &b}}); })
                .find("overlap"),
            std::string::npos);
}

TEST(Bindings, RangesOffBlockBoundariesOrOutsideAreRefused) {
  migratory a;
  EXPECT_NE(usage_error_of([&] { xsm::alloc_bytes(4 * 4096, {xsm::range{100, 4096, &a}}); }).find("block boundaries"),
            std::string::npos);
  EXPECT_NE(usage_error_of([&] { xsm::alloc_bytes(4 * 4096, {xsm::range{4 * 4096, 4096, &a}}); }).find("outside"),
            std::string::npos);
}

TEST(Bindings, ABlockSizeTheProtocolCannotTakeIsRefused) {
  big_blocks_only p;
  const std::string what = usage_error_of([&] { xsm::alloc<int>(1000, p); });
  EXPECT_NE(what.find("protocol 'big-blocks-only' cannot run 4096-byte blocks: it keeps 64 KiB blocks only"),
            std::string::npos)
      << what;
  int* ok = xsm::alloc<int>(1000, p, {.block_size = 65536});
  ok[3] = 4;
  EXPECT_EQ(ok[3], 4);
  xsm::free(ok);
}

TEST(Bindings, BindingAfterFirstUseIsRefused) {
  auto* mem = tsm::alloc<std::uint64_t>(2 * 512);
  migratory m;
  xsm::bind(mem, 4096, m);  // untouched: fine
  EXPECT_EQ(tsm::protocol_at(mem).name(), "migratory");
  mem[512] = 1;  // the second block, under stache, is used now
  const std::string what = usage_error_of([&] { xsm::bind(mem + 512, 4096, m); });
  EXPECT_NE(what.find("were used under protocol 'stache' already"), std::string::npos) << what;
  EXPECT_EQ(tsm::protocol_at(mem + 512).name(), "stache");
  tsm::free(mem);
}

TEST(BindingsDeathTest, AMessageForAnotherProtocolNamesBoth) {
  EXPECT_DEATH(
      {
        auto* mem = tsm::alloc<std::uint64_t>(512);  // stache
        const memory::segment s = memory::segment_of(mem);
        xsm::send<&migratory::on_request>(0, s, 0);
        squall::fence();
      },
      "a message for protocol migratory_example::migratory arrived for block 0 .*which protocol 'stache'");
}

TEST(BindingsDeathTest, AMessageForAFreedSegmentSaysSo) {
  EXPECT_DEATH(
      {
        migratory m;
        auto* mem = xsm::alloc<std::uint64_t>(512, m);
        const memory::segment s = memory::segment_of(mem);
        squall::am::set_aggregation(8);  // the message waits in a packet while the segment goes
        xsm::send<&migratory::on_request>(0, s, 0);
        memory::free(s);
        squall::am::flush();
        squall::am::poll();
      },
      "no live segment holds it");
}

}  // namespace
