// SPDX-License-Identifier: BSD-3-Clause
// Sizes that can never be served are refused at once, before anything is built for them
// (so quickly and without taking memory), and never wrap into a small allocation that
// overlaps another. One node.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>

namespace {

using namespace squall;

class runtime_environment : public ::testing::Environment {
 public:
  void SetUp() override { squall::init(); }
  void TearDown() override { squall::finalize(); }
};
const auto* const environment = ::testing::AddGlobalTestEnvironment(new runtime_environment);

constexpr std::size_t tib = std::size_t{1} << 40;
constexpr std::size_t mib = std::size_t{1} << 20;

std::size_t peak_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<std::size_t>(u.ru_maxrss) * 1024;
}

// `f` throws usage_error, and the process's peak memory grows by less than 32 MiB meanwhile
// (per-block state built for the size first would take hundreds).
template <class F>
void refused_in_bounded_memory(F f, const char* what, const char* message) {
  const std::size_t before = peak_bytes();
  try {
    f();
    ADD_FAILURE() << what << " was accepted";
  } catch (const usage_error& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << what << ": " << e.what();
  }
  EXPECT_LT(peak_bytes() - before, 32 * mib) << what;
}

TEST(Sizes, SegmentsBeyondTheRangeOrMemoryAreRefusedBeforeTheyAreBuilt) {
  // 2 TiB in blocks of 256 KiB: 8 M blocks of protocol state, over the default range (1 TiB;
  // 256 GiB under TSan).
  const std::string range = "exceed the segment range of " + std::to_string(squall::memory::segment_range_bytes() >> 30) +
                            " GiB (SQUALL_SEGMENT_SPACE_GIB)";
  refused_in_bounded_memory([] { tsm::alloc_bytes(2 * tib, {.block_size = 256 * 1024}); }, "alloc_bytes(2 TiB)",
                            range.c_str());
  // A count whose byte size wraps to 8 bytes.
  refused_in_bounded_memory([] { tsm::alloc<std::uint64_t>((SIZE_MAX >> 3) + 2); }, "alloc<uint64_t>(2^61 + 1)",
                            "elements of 8 bytes are more bytes than the address space has");
  // Nothing was left half-made: a normal segment still comes and goes.
  auto* x = tsm::alloc<int>(1000);
  x[999] = 1;
  tsm::free(x);
}

// A block above tsm::max_block_size (64 MiB) is refused, whatever the size: before, 40 bytes in
// a 2 GiB block took 31 s and 8 GB. (128 MiB here, so that an unchecked one stays cheap.)
TEST(Sizes, BlocksAboveTheLargestAreRefused) {
  refused_in_bounded_memory([] { tsm::alloc<int>(10, {.block_size = 2 * tsm::max_block_size}); },
                            "alloc<int>(10) in blocks of 128 MiB",
                            "the block size must be a power of two from 4096 bytes to 64 MiB (got 134217728)");
}

TEST(Sizes, ProtocolStateBeyondAQuarterOfTheHostsMemoryIsRefused) {
  // Memory the program has (no range to exceed) of 64 times the host's memory: a block of
  // 4096 bytes per 64 bytes of memory, each needing more than 16 bytes of state.
  const auto host = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE));
  static int local[1024];
  refused_in_bounded_memory([&] { tsm::share(local, host / 64 * 4096); }, "share(host memory x 64)",
                            "of protocol state on each node, more than a quarter of this host's memory");
}

TEST(Sizes, LockCountsBeyondMemoryAreRefusedBeforeTheyAreBuilt) {
  for (const std::size_t count : {SIZE_MAX, SIZE_MAX - 1, std::size_t{1} << 40}) {
    refused_in_bounded_memory([&] { tsm::lock_array locks(count); }, "lock_array(huge)",
                              "locks need more state on each node than a quarter of this host's memory");
  }
  tsm::lock_array locks(4);  // and a normal one still works
  locks.acquire(3);
  locks.release(3);
}

TEST(Sizes, TheLargestHeapSettingIsRefusedBeforeItIsBuilt) {
  ASSERT_FALSE(tsm::initialized());
  setenv("SQUALL_TSM_HEAP_MIB", "1048576", 1);  // its largest value: 1 TiB, and the placed heap too
  refused_in_bounded_memory([] { tsm::init({.block_size = 256 * 1024}); }, "tsm::init(1 TiB heap)",
                            "tsm::init: the shared heap and the placed heap of 1048576 MiB each (SQUALL_TSM_HEAP_MIB)");
  unsetenv("SQUALL_TSM_HEAP_MIB");
  EXPECT_FALSE(tsm::initialized());
  tsm::init();  // the default heap, after the refusal
  EXPECT_TRUE(tsm::initialized());
}

TEST(Sizes, HeapSizesThatWrapAreRefusedAndNeverOverlap) {
  if (!tsm::initialized()) tsm::init();
  for (const std::size_t huge : {SIZE_MAX, SIZE_MAX - 63, SIZE_MAX - 64, SIZE_MAX - 100, SIZE_MAX / 2}) {
    void* wrapped = nullptr;
    void* placed = nullptr;
    EXPECT_THROW(wrapped = tsm::malloc(huge), usage_error) << huge;
    EXPECT_THROW(placed = tsm::malloc(huge, 0), usage_error) << huge;
    // What comes next is memory of its own: writing the first bytes of a block handed out for
    // the huge size (were one handed out) leaves it whole.
    void* next = tsm::malloc(100);
    void* next_placed = tsm::malloc(100, 0);
    if (wrapped != nullptr) std::memset(wrapped, 0, 64);
    if (placed != nullptr) std::memset(placed, 0, 64);
    EXPECT_NO_THROW(tsm::heap_free(next)) << "the block for " << huge << " bytes overlapped the next one";
    EXPECT_NO_THROW(tsm::heap_free(next_placed)) << "the block for " << huge << " bytes overlapped the next one";
  }
}

}  // namespace
