// SPDX-License-Identifier: BSD-3-Clause
// block-update on the scripted irregular loop (update_pattern.hpp): results equal to the
// sequential reference, and exact counts - one miss per block read from another node, in the
// recording only; afterwards every written block pushed to each of its readers, one channel
// message per pair per phase (block messages before the channel exists, within a longer
// recording). A reader found after the recording misses once and is served by block messages. A block size the protocol cannot take is a usage_error.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>
#include <squall/xsm.hpp>
#include <squall/xsm/block_update.hpp>

#include "update_pattern.hpp"

namespace {

using namespace squall;
using update_test::layout;

constexpr int iterations = 4;
constexpr std::uint64_t block_bytes = 4096;

struct expected {
  std::uint64_t misses = 0;  // blocks this node reads from other nodes
  std::uint64_t served = 0;  // (block, reader) pairs of this node's blocks
  std::uint64_t readers = 0;  // nodes reading some block of this node
};

expected expect_for(const layout& where) {
  expected e;
  const int me = node();
  e.misses = where.blocks_read(me).size();
  for (int c = 0; c < nodes(); ++c) {
    std::uint64_t from_me = 0;
    for (const auto b : where.blocks_read(c)) from_me += where.home[b * update_test::per_block] == me ? 1 : 0;
    e.served += from_me;
    e.readers += from_me > 0 ? 1 : 0;
  }
  return e;
}

void expect_reference(const double* x, std::size_t n) {
  const std::vector<double> ref = update_test::reference(n, iterations);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += x[i] == ref[i] ? 0 : 1;
  EXPECT_EQ(wrong, 0u) << "elements differing from the sequential reference";
}

TEST(BlockUpdate, RecordsTheFirstIterationThenPushesOnePerPairPerPhase) {
  // Recording: the setup's barrier and the first iteration's two.
  xsm::block_update upd(3);
  const std::size_t n = update_test::elements_for(nodes());
  double* x = xsm::alloc<double>(n, upd, {.homes = memory::home_policy::partition()});
  const layout where(x, n);
  update_test::write_initial(x, where);
  tsm::barrier();
  update_test::iterate({{x, &where}}, iterations);

  const std::uint64_t misses = upd.misses.value(), after = upd.misses_after_recording.value(),
                      served = upd.requests_served.value(), late = upd.late_consumers.value(), pushes = upd.pushes.value(),
                      messages = upd.push_messages.value(), bytes = upd.push_bytes.value(), phases = upd.phases.value();
  tsm::barrier();
  const expected e = expect_for(where);
  EXPECT_EQ(misses, e.misses);
  EXPECT_EQ(after, 0u);
  EXPECT_EQ(served, e.served);
  EXPECT_EQ(late, 0u);
  // The setup's barrier: no reader recorded yet; the first iteration's middle barrier:
  // nothing written; from the recording's last barrier on, every block written each iteration.
  EXPECT_EQ(pushes, iterations * e.served);
  EXPECT_EQ(messages, iterations * e.readers);
  EXPECT_EQ(bytes, iterations * e.served * (sizeof(std::uint64_t) + block_bytes));
  EXPECT_EQ(phases, 1u + 2u * iterations);
  if (nodes() > 1) {
    EXPECT_GT(e.served, 0u);  // the pattern does cross nodes
  }
  expect_reference(x, n);
  xsm::free(x);
}

TEST(BlockUpdate, ReaderFoundAfterTheRecordingMissesOnceAndIsPushedByBlockMessages) {
  xsm::block_update upd;  // the recording ends at the setup's barrier, before any read
  const std::size_t n = update_test::elements_for(nodes());
  double* x = xsm::alloc<double>(n, upd, {.homes = memory::home_policy::partition()});
  const layout where(x, n);
  update_test::write_initial(x, where);
  tsm::barrier();
  update_test::iterate({{x, &where}}, iterations);

  const std::uint64_t misses = upd.misses.value(), after = upd.misses_after_recording.value(),
                      late = upd.late_consumers.value(), pushes = upd.pushes.value(),
                      messages = upd.push_messages.value(), bytes = upd.push_bytes.value();
  tsm::barrier();
  const expected e = expect_for(where);
  EXPECT_EQ(misses, e.misses);  // still once per block: late readers are recorded
  EXPECT_EQ(after, e.misses);
  EXPECT_EQ(late, e.served);
  EXPECT_EQ(pushes, iterations * e.served);
  EXPECT_EQ(messages, iterations * e.served);  // one block message per push
  EXPECT_EQ(bytes, iterations * e.served * block_bytes);
  expect_reference(x, n);
  xsm::free(x);
}

TEST(BlockUpdate, PushesWithinALongerRecordingGoAsBlockMessages) {
  // Recording through the second iteration: the first iteration's writes reach the readers
  // recorded so far as block messages (no channel yet), the later ones on the channel.
  xsm::block_update upd(5);
  const std::size_t n = update_test::elements_for(nodes());
  double* x = xsm::alloc<double>(n, upd, {.homes = memory::home_policy::partition()});
  const layout where(x, n);
  update_test::write_initial(x, where);
  tsm::barrier();
  update_test::iterate({{x, &where}}, iterations);

  const std::uint64_t after = upd.misses_after_recording.value(), pushes = upd.pushes.value(),
                      messages = upd.push_messages.value(), bytes = upd.push_bytes.value();
  tsm::barrier();
  const expected e = expect_for(where);
  EXPECT_EQ(after, 0u);
  EXPECT_EQ(pushes, iterations * e.served);
  EXPECT_EQ(messages, e.served + (iterations - 1) * e.readers);
  EXPECT_EQ(bytes, e.served * block_bytes + (iterations - 1) * e.served * (sizeof(std::uint64_t) + block_bytes));
  expect_reference(x, n);
  xsm::free(x);
}

TEST(BlockUpdate, RefusesBlocksLargerThanItTakes) {
  xsm::block_update upd;
  try {
    (void)xsm::alloc<double>(1024, upd, {.block_size = 2 * xsm::block_update::largest_block});
    FAIL() << "no usage_error";
  } catch (const usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("block-update takes blocks of at most 65536 bytes"), std::string::npos) << e.what();
  }
  EXPECT_THROW({ xsm::block_update none(0); }, usage_error);
}

}  // namespace
