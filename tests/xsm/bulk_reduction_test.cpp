// SPDX-License-Identifier: BSD-3-Clause
// bulk-reduction (libxsm/PROTOCOLS.md): totals equal to a sequential reference combined in
// the stated order, exact channel messages and bytes, exact fetches by readers, bad uses.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include <squall/squall.hpp>
#include <squall/stats.hpp>
#include <squall/tsm.hpp>
#include <squall/xsm.hpp>
#include <squall/xsm/bulk_reduction.hpp>
#include "usage_error_of.hpp"

namespace {

using namespace squall;

constexpr std::size_t elements = 3000;  // 23,000 bytes: 6 blocks of 4 KiB, the last partly used
constexpr std::size_t per_block = 4096 / sizeof(double);
constexpr std::size_t blocks = (elements + per_block - 1) / per_block;

double contribution(int node, std::size_t i) { return static_cast<double>((node + 1) * 1000 + static_cast<int>(i % 97)); }

std::vector<double> contributions_of(int node) {
  std::vector<double> c(elements);
  for (std::size_t i = 0; i < elements; ++i) c[i] = contribution(node, i);
  return c;
}

// Not commutative: the result shows the combination order.
struct ordered {
  double operator()(double a, double b) const { return 3 * a + b; }
};

// The stated order: element i of piece q (the blocks homed at q; round robin here) is
// op(...op(op(c[q+1], c[q+2]), ...), c[q]).
template <class Op>
double reference(std::size_t i, Op op) {
  const int n = nodes(), q = static_cast<int>((i / per_block) % static_cast<std::size_t>(n));
  double acc = contribution((q + 1) % n, i);
  for (int k = 2; k <= n; ++k) acc = op(acc, contribution((q + k) % n, i));
  return acc;
}

std::uint64_t own_bytes() {
  std::uint64_t bytes = 0;
  for (std::size_t b = static_cast<std::size_t>(node()); b < blocks; b += static_cast<std::size_t>(nodes())) {
    bytes += std::min(per_block, elements - b * per_block) * sizeof(double);
  }
  return bytes;
}

std::uint64_t own_blocks() {
  std::uint64_t count = 0;
  for (std::size_t b = 0; b < blocks; ++b) count += b % static_cast<std::size_t>(nodes()) == static_cast<std::size_t>(node());
  return count;
}

template <class Op>
void expect_totals(const double* total, Op op) {
  for (std::size_t i = 0; i < elements; ++i) {
    ASSERT_EQ(total[i], reference(i, op)) << "element " << i;
  }
}

TEST(BulkReduction, TotalsInTheStatedOrderWithExactMessages) {
  xsm::bulk_reduction red;
  double* total = xsm::alloc<double>(elements, red);
  const auto mine = contributions_of(node());
  const std::uint64_t sent_before = stats::take().get("channel.messages_sent");

  red.reduce(std::span<const double>(mine), ordered{});
  expect_totals(total, ordered{});
  const std::uint64_t n = static_cast<std::uint64_t>(nodes());
  const std::uint64_t sent = stats::take().get("channel.messages_sent") - sent_before;
  const std::uint64_t messages = red.messages.value(), bytes = red.bytes.value(), fetches = red.fetches.value();
  tsm::barrier();  // every node has read every block: this home has sent all its copies
  const std::uint64_t copies = red.copies_sent.value();
  // N - 1 messages a node, carrying every piece but its own; one fetch per other home's block.
  EXPECT_EQ(messages, n - 1);
  EXPECT_EQ(sent, n - 1);
  EXPECT_EQ(bytes, elements * sizeof(double) - own_bytes());
  EXPECT_EQ(fetches, blocks - own_blocks());
  EXPECT_EQ(copies, own_blocks() * (n - 1));

  // Another phase drops the copies: readers fetch again.
  red.reduce(std::span<const double>(mine), op::sum{});
  expect_totals(total, op::sum{});
  EXPECT_EQ(red.fetches.value(), 2 * (blocks - own_blocks()));
  EXPECT_EQ(red.reductions.value(), 2u);
  tsm::barrier();
  xsm::free(total);
}

TEST(BulkReduction, MinAndMaxWithEveryNodeReadingEarly) {
  xsm::bulk_reduction red;
  double* total = xsm::alloc<double>(elements, red);
  const auto mine = contributions_of(node());
  // A reader that finished its part may ask a home still finishing its own: it is answered then.
  red.reduce(std::span<const double>(mine), op::min{});
  expect_totals(total, op::min{});
  tsm::barrier();
  red.reduce(std::span<const double>(mine), op::max{});
  expect_totals(total, op::max{});
  tsm::barrier();
  xsm::free(total);
}

TEST(BulkReduction, BadUsesAreClearErrors) {
  xsm::bulk_reduction red;
  double* total = xsm::alloc<double>(elements, red);
  std::vector<double> too_long(blocks * per_block + 1, 1.0);
  EXPECT_THROW(
      {
        try {
          red.reduce(std::span<const double>(too_long), op::sum{});
        } catch (const usage_error& e) {
          EXPECT_NE(std::string(e.what()).find("is longer than the 24576 bytes bound"), std::string::npos) << e.what();
          throw;
        }
      },
      usage_error);
  using triple = std::array<double, 3>;  // 24 bytes: does not divide 4096
  std::vector<triple> odd(10);
  const auto add3 = [](const triple& a, const triple& b) { return triple{a[0] + b[0], a[1] + b[1], a[2] + b[2]}; };
  EXPECT_THROW(red.reduce(std::span<const triple>(odd), add3), usage_error);
  xsm::bulk_reduction unbound;
  EXPECT_THROW(unbound.reduce(std::span<const double>(too_long), op::sum{}), usage_error);
  EXPECT_EQ(red.messages.value(), 0u);  // nothing was sent
  tsm::barrier();
  xsm::free(total);
}

TEST(BulkReduction, SecondBindingIsRefusedAndFreeReleasesTheObject) {
  xsm::bulk_reduction red;
  double* total = xsm::alloc<double>(elements, red);
  const std::string what = squall::test::usage_error_of([&red] { (void)xsm::alloc<double>(elements, red); });
  EXPECT_NE(what.find("make one object per data structure"), std::string::npos) << what;
  tsm::barrier();
  xsm::free(total);
  double* again = xsm::alloc<double>(elements, red);  // free detached it: it may run another
  xsm::free(again);
  // The probe's: reduce after free ran on into the freed segment and failed with
  // "segment::home on a segment that was freed", naming neither reduce nor free.
  const std::vector<double> mine(elements, 1.0);
  const std::string after = squall::test::usage_error_of([&] { red.reduce(std::span<const double>(mine), op::sum{}); });
  EXPECT_NE(after.find("bulk_reduction::reduce: no memory is bound to this protocol (before xsm::alloc, or after xsm::free)"),
            std::string::npos)
      << after;
  EXPECT_EQ(red.messages.value(), 0u);
}

}  // namespace
