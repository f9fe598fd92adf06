// SPDX-License-Identifier: BSD-3-Clause
// Bad bindings are clear errors, and a protocol message that reaches the wrong protocol or a
// freed segment ends the job naming both, never an unchecked cast (one node; the messages
// are sent to itself; each death test in a fresh process).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>
#include <squall/xsm.hpp>
#include <squall/xsm/am_append.hpp>
#include <squall/xsm/block_update.hpp>
#include <squall/xsm/bulk_reduction.hpp>
#include <squall/xsm/direct_reduction.hpp>
#include <squall/xsm/late_commit.hpp>
#include <squall/xsm/multiple_writer.hpp>
#include <squall/xsm/node_update.hpp>

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

// What libxsm's calls said before squall::init: made from a static initialiser, before main and
// the environment's init (the death tests' fresh processes run it again, harmlessly).
std::vector<std::string> said_before_init() {
  migratory m;
  xsm::bulk_reduction sums;
  xsm::direct_reduction<double> contributions;
  xsm::node_update updates(sizeof(double));
  std::uint64_t word = 0;
  const std::vector<std::int64_t> elements{1};
  const std::vector<double> local(8);
  return {
      usage_error_of([&] { xsm::alloc<std::uint64_t>(512, m); }),
      usage_error_of([&] { xsm::alloc_bytes(4096, {xsm::range{0, 4096, &m}}); }),
      usage_error_of([&] { xsm::bind(&word, 4096, m); }),
      usage_error_of([&] { xsm::free(&word); }),
      usage_error_of([] { xsm::am_append appends(8, 16); }),
      usage_error_of([] { xsm::late_commit list(8, 16); }),
      usage_error_of([&] { sums.reduce(std::span<const double>(local), op::sum{}); }),
      usage_error_of([&] { contributions.inspect(elements); }),
      usage_error_of([&] { contributions.end_phase(); }),
      usage_error_of([&] { updates.declare_reads(elements); }),
      usage_error_of([&] { updates.end_phase(); }),
  };
}
const std::vector<std::string> before_init = said_before_init();

// libxsm's calls name themselves, not the TSM or runtime call they reach first ("tsm::alloc_bound
// called before squall::init", "squall::allreduce ...", or the protocols' "no memory is bound").
TEST(Entry, CallsBeforeInitNameThemselves) {
  const std::vector<std::string> expected{
      "squall: xsm::alloc called before squall::init",
      "squall: xsm::alloc_bytes called before squall::init",
      "squall: xsm::bind called before squall::init",
      "squall: xsm::free called before squall::init",
      "squall: xsm::am_append called before squall::init",
      "squall: xsm::late_commit called before squall::init",
      "squall: xsm::bulk_reduction::reduce called before squall::init",
      "squall: xsm::direct_reduction::inspect called before squall::init",
      "squall: xsm::direct_reduction::end_phase called before squall::init",
      "squall: xsm::node_update::declare_reads called before squall::init",
      "squall: xsm::node_update::end_phase called before squall::init",
  };
  EXPECT_EQ(before_init, expected);
}

// Runs f, which must throw usage_error; prints its message on standard error.
template <class F>
void say_usage_error(F&& f) {
  std::fprintf(stderr, "%s\n", usage_error_of(f).c_str());
}

// The same after squall::finalize, with objects made while the runtime ran (a death test: the
// runtime stays stopped).
TEST(EntryDeathTest, CallsAfterFinalizeNameThemselves) {
  EXPECT_EXIT(
      {
        migratory m;
        auto* appends = new xsm::am_append(8, 16);
        auto* list = new xsm::late_commit(8, 16);
        auto* sums = new xsm::bulk_reduction;
        auto* contributions = new xsm::direct_reduction<double>;
        auto* updates = new xsm::node_update(sizeof(double));
        auto* mem = xsm::alloc<std::uint64_t>(512, m);
        (void)xsm::alloc<double>(512, *sums);
        (void)xsm::alloc<double>(512, *contributions);
        (void)xsm::alloc<double>(512, *updates);
        const std::vector<std::int64_t> elements{1};
        const std::vector<double> local(8);
        contributions->inspect(elements);
        updates->declare_reads(elements);
        squall::finalize();
        say_usage_error([&] { xsm::alloc<std::uint64_t>(512, m); });
        say_usage_error([&] { xsm::alloc_bytes(4096, {xsm::range{0, 4096, &m}}); });
        say_usage_error([&] { xsm::bind(mem, 4096, m); });
        say_usage_error([&] { xsm::free(mem); });
        say_usage_error([] { xsm::am_append again(8, 16); });
        say_usage_error([&] { appends->append(0, std::uint64_t{1}); });
        say_usage_error([&] { appends->end_phase(); });
        say_usage_error([] { xsm::late_commit again(8, 16); });
        say_usage_error([&] { list->commit(); });
        say_usage_error([&] { sums->reduce(std::span<const double>(local), op::sum{}); });
        say_usage_error([&] { contributions->inspect(elements); });
        say_usage_error([&] { contributions->end_phase(); });
        say_usage_error([&] { updates->declare_reads(elements); });
        say_usage_error([&] { updates->end_phase(); });
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0),
      "xsm::alloc called after squall::finalize.*"
      "xsm::alloc_bytes called after squall::finalize.*"
      "xsm::bind called after squall::finalize.*"
      "xsm::free called after squall::finalize.*"
      "xsm::am_append called after squall::finalize.*"
      "xsm::am_append::append called after squall::finalize.*"
      "xsm::am_append::end_phase called after squall::finalize.*"
      "xsm::late_commit called after squall::finalize.*"
      "xsm::late_commit::commit called after squall::finalize.*"
      "xsm::bulk_reduction::reduce called after squall::finalize.*"
      "xsm::direct_reduction::inspect called after squall::finalize.*"
      "xsm::direct_reduction::end_phase called after squall::finalize.*"
      "xsm::node_update::declare_reads called after squall::finalize.*"
      "xsm::node_update::end_phase called after squall::finalize");
}

// Objects that outlive the runtime's scope (or static ones) are destroyed after
// squall::finalize quietly: am_append and late_commit freed their segment there, collectively,
// and the usage_error of that free ended the process through std::terminate.
TEST(FinalizeDeathTest, ObjectsDestroyedAfterFinalizeGoQuietly) {
  EXPECT_EXIT(
      {
        {
          xsm::am_append appends(8, 16);
          xsm::late_commit list(8, 16);
          xsm::bulk_reduction sums;
          xsm::direct_reduction<double> contributions;
          xsm::node_update updates(sizeof(double));
          xsm::block_update pushes;
          xsm::multiple_writer writers;
          tsm::lock_array locks(4);
          for (xsm::protocol* p : std::initializer_list<xsm::protocol*>{&sums, &contributions, &updates, &pushes, &writers}) {
            (void)xsm::alloc<double>(512, *p);
          }
          const std::vector<std::int64_t> elements{1};
          contributions.inspect(elements);
          updates.declare_reads(elements);
          appends.append(0, std::uint64_t{1});  // a phase begun and not ended
          list.append(std::uint64_t{2});        // an item never committed
          locks.acquire(1);                     // a lock held
          tsm::barrier();
          squall::finalize();
        }
        std::fprintf(stderr, "destroyed after finalize\n");
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "destroyed after finalize");
}

// A count of elements whose bytes overflow the address space is refused naming the xsm call
// made: it said "tsm::alloc", a call the program never made.
TEST(Bindings, TooManyElementsNameTheXsmCall) {
  migratory m;
  const std::string wraps = "2305843009213693953 elements of 8 bytes are more bytes than the address space has";
  EXPECT_EQ(usage_error_of([&] { xsm::alloc<std::uint64_t>((SIZE_MAX >> 3) + 2, m); }), "squall: xsm::alloc: " + wraps);
  EXPECT_EQ(usage_error_of([] { xsm::late_commit list(8, (SIZE_MAX >> 3) + 2); }),
            "squall: xsm::late_commit: " + wraps);
  EXPECT_EQ(usage_error_of([] { xsm::am_append appends(8, (SIZE_MAX >> 3) + 2); }),
            "squall: xsm::am_append: " + wraps);
  // tsm::alloc's own still says tsm::alloc.
  EXPECT_EQ(usage_error_of([] { tsm::alloc<std::uint64_t>((SIZE_MAX >> 3) + 2); }), "squall: tsm::alloc: " + wraps);
}

// XSM memory touched after squall::finalize, where its protocol needs the runtime to serve the
// fault (a message, the node's number): the node ended with "the protocol's read fault handler
// threw ...: squall: am::send called after squall::finalize (a fault handler cannot throw ...)",
// naming a call the program never made and blaming the protocol. Now the access is named, as
// stache names it (tests/tsm/errors_test.cpp).
TEST(FinalizeDeathTest, XsmMemoryTouchedAfterFinalizeSaysSo) {
  EXPECT_DEATH(
      {
        migratory m;
        auto* x = xsm::alloc<std::uint64_t>(2 * 512, m);  // never touched: its first access faults
        squall::finalize();
        volatile std::uint64_t* p = x;
        (void)p[512];
      },
      "a read of block 1 of the TSM segment at 0x[0-9a-f]+, run by protocol 'migratory', after squall::finalize: "
      "the protocol cannot serve it once the runtime has stopped \\(squall: am::run_locked called after "
      "squall::finalize\\); finish with TSM and XSM memory");
  EXPECT_DEATH(
      {
        xsm::node_update updates(sizeof(double));
        auto* y = xsm::alloc<double>(512, updates);
        squall::finalize();
        volatile double* p = y;
        p[3] = 1.0;
      },
      "a write of block 0 of the TSM segment at 0x[0-9a-f]+, run by protocol 'node-update', after "
      "squall::finalize: the protocol cannot serve it once the runtime has stopped");
}

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

// direct_reduction::owner_of before xsm::alloc divided by its block size of 0, and the process
// ended with SIGFPE. Unbound (before the binding, after xsm::free) or outside the array, the
// query is a usage_error naming itself.
TEST(Bindings, DirectReductionOwnerOfOutsideABoundArrayIsRefused) {
  xsm::direct_reduction<double> red;
  const std::string unbound =
      "squall: xsm::direct_reduction::owner_of: no memory is bound to this protocol (before xsm::alloc, or after "
      "xsm::free)";
  EXPECT_EQ(usage_error_of([&] { (void)red.owner_of(0); }), unbound);
  double* y = xsm::alloc<double>(1000, red);
  EXPECT_EQ(red.owner_of(0), 0);
  EXPECT_EQ(red.owner_of(999), 0);
  const std::string outside = " is outside the array of " + std::to_string(red.elements()) + " elements";
  EXPECT_EQ(usage_error_of([&] { (void)red.owner_of(-1); }),
            "squall: xsm::direct_reduction::owner_of: element -1" + outside);
  const auto past = static_cast<std::int64_t>(red.elements());
  EXPECT_EQ(usage_error_of([&] { (void)red.owner_of(past); }),
            "squall: xsm::direct_reduction::owner_of: element " + std::to_string(past) + outside);
  xsm::free(y);
  EXPECT_EQ(usage_error_of([&] { (void)red.owner_of(0); }), unbound);
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
