// SPDX-License-Identifier: BSD-3-Clause
// direct-reduction on a scripted irregular pattern: every node contributes to the same
// elements each phase (some twice, owned or not), and the owners' elements equal a sequential
// reference that combines in the protocol's stated order (the owner's own stores first, then
// each other node's accumulation in node order), for add, min, max and a user operation;
// exact message, byte and element counts; bad bindings and calls are usage errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include <squall/squall.hpp>
#include <squall/stats.hpp>
#include <squall/tsm.hpp>
#include <squall/xsm.hpp>
#include <squall/xsm/direct_reduction.hpp>
#include "usage_error_of.hpp"

namespace {

using namespace squall;

constexpr std::size_t count = 4096;  // 8 blocks of 4 KiB doubles, homed round robin
constexpr int per_node = 300;        // contributions per node per phase (each element twice)
constexpr int phase_count = 3;

std::int64_t element(int p, int k) { return (static_cast<std::int64_t>(k / 2) * 7919 + p * 613) % static_cast<std::int64_t>(count); }
int owner(std::int64_t e) { return static_cast<int>(static_cast<std::size_t>(e) * 8 / 4096) % nodes(); }

template <class T>
using value_fn = T (*)(int p, int k, int phase);

// Every node's stores of `phase`, then the owners' combination, as the protocol orders them.
template <class T, class Op>
void reference_phase(std::vector<T>& ref, Op op, T identity, value_fn<T> value, int phase) {
  const int n = nodes();
  std::vector<std::vector<T>> acc(static_cast<std::size_t>(n), std::vector<T>(count, identity));
  std::vector<std::vector<bool>> touched(static_cast<std::size_t>(n), std::vector<bool>(count, false));
  for (int p = 0; p < n; ++p) {
    for (int k = 0; k < per_node; ++k) {
      const auto e = static_cast<std::size_t>(element(p, k));
      T& into = owner(element(p, k)) == p ? ref[e] : acc[static_cast<std::size_t>(p)][e];
      into = op(into, value(p, k, phase));
      touched[static_cast<std::size_t>(p)][e] = true;
    }
  }
  for (std::size_t e = 0; e < count; ++e) {
    for (int p = 0; p < n; ++p) {
      if (p != owner(static_cast<std::int64_t>(e)) && touched[static_cast<std::size_t>(p)][e]) {
        ref[e] = op(ref[e], acc[static_cast<std::size_t>(p)][e]);
      }
    }
  }
}

// Runs the phases on y bound to `red`, checks owned elements against the reference and the
// accumulators' reset after each phase. Returns the number of mismatches.
template <class T, class Op>
int run_and_check(xsm::direct_reduction<T, Op>& red, T* y, Op op, T identity, value_fn<T> value) {
  const int me = node();
  std::vector<std::int64_t> mine;
  for (int k = 0; k < per_node; ++k) mine.push_back(element(me, k));
  red.inspect(mine);
  std::vector<T> ref(count, T{});  // the array starts zeroed
  int bad = 0;
  for (int phase = 0; phase < phase_count; ++phase) {
    for (int k = 0; k < per_node; ++k) y[element(me, k)] = op(y[element(me, k)], value(me, k, phase));
    red.end_phase();
    reference_phase(ref, op, identity, value, phase);
    for (std::size_t e = 0; e < count; ++e) {
      if (owner(static_cast<std::int64_t>(e)) == me) bad += !(y[e] == ref[e]);
    }
    for (const std::int64_t e : mine) {
      if (owner(e) != me) bad += !(y[e] == identity);
    }
  }
  return bad;
}

double sum_value(int p, int k, int phase) { return 0.1 * (k % 17) + 0.37 * p + 1.3 * phase; }
std::int64_t signed_value(int p, int k, int phase) { return (k * 31 + p * 7 + phase * 11) % 1000 - 500; }
std::uint64_t bit_value(int p, int k, int phase) { return std::uint64_t{1} << ((k + 3 * p + phase) % 64); }

struct bit_or {
  std::uint64_t operator()(std::uint64_t a, std::uint64_t b) const { return a | b; }
};

TEST(DirectReduction, AddEqualsTheSequentialReferenceInNodeOrder) {
  xsm::direct_reduction<double> red;
  auto* y = xsm::alloc<double>(count, red);
  EXPECT_EQ(run_and_check(red, y, op::sum{}, 0.0, sum_value), 0);
  tsm::barrier();
  xsm::free(y);
}

TEST(DirectReduction, MinAndMaxEqualTheSequentialReference) {
  xsm::direct_reduction<std::int64_t, op::min> low;
  xsm::direct_reduction<std::int64_t, op::max> high;
  auto* a = xsm::alloc<std::int64_t>(count, low);
  auto* b = xsm::alloc<std::int64_t>(count, high);
  EXPECT_EQ(run_and_check(low, a, op::min{}, INT64_MAX, signed_value), 0);
  EXPECT_EQ(run_and_check(high, b, op::max{}, INT64_MIN, signed_value), 0);
  tsm::barrier();
  xsm::free(b);
  xsm::free(a);
}

TEST(DirectReduction, UserOperationWithItsIdentity) {
  xsm::direct_reduction<std::uint64_t, bit_or> red(bit_or{}, 0);
  auto* y = xsm::alloc<std::uint64_t>(count, red);
  EXPECT_EQ(run_and_check(red, y, bit_or{}, std::uint64_t{0}, bit_value), 0);
  tsm::barrier();
  xsm::free(y);
}

// One message per owner contributed to per phase, carrying exactly the distinct elements.
TEST(DirectReduction, CountsAreExact) {
  xsm::direct_reduction<double> red;
  auto* y = xsm::alloc<double>(count, red);
  const int me = node();
  std::set<std::int64_t> remote;
  std::set<int> owners;
  for (int k = 0; k < per_node; ++k) {
    if (owner(element(me, k)) != me) {
      remote.insert(element(me, k));
      owners.insert(owner(element(me, k)));
    }
  }
  const std::uint64_t channel_before = stats::take().get("channel.messages_sent");
  EXPECT_EQ(run_and_check(red, y, op::sum{}, 0.0, sum_value), 0);
  const std::uint64_t channel_messages = stats::take().get("channel.messages_sent") - channel_before;
  const std::uint64_t messages = red.messages.value(), bytes = red.bytes.value(), sent = red.elements_sent.value(),
                      phases = red.phases.value();
  std::set<std::size_t> blocks;
  for (const std::int64_t e : remote) blocks.insert(static_cast<std::size_t>(e) * 8 / 4096);
  const std::uint64_t accumulators = red.accumulator_blocks.value();
  tsm::barrier();
  EXPECT_EQ(phases, static_cast<std::uint64_t>(phase_count));
  EXPECT_EQ(messages, phase_count * owners.size());
  EXPECT_EQ(channel_messages, messages);
  EXPECT_EQ(sent, phase_count * remote.size());
  EXPECT_EQ(bytes, sent * sizeof(double));
  EXPECT_EQ(accumulators, blocks.size());
  if (nodes() == 1) {
    EXPECT_EQ(messages, 0u);
  }
  xsm::free(y);
}

TEST(DirectReduction, BadBindingsAndCallsAreUsageErrors) {
  xsm::direct_reduction<double> red;
  EXPECT_THROW(red.end_phase(), usage_error);
  EXPECT_THROW(red.inspect({}), usage_error);  // not bound yet
  auto* y = xsm::alloc<double>(count, red);
  EXPECT_THROW(xsm::alloc<double>(count, red), usage_error);  // one object, one array
  EXPECT_THROW(red.end_phase(), usage_error);                  // before inspect
  std::vector<std::int64_t> wrong{node() == 0 ? static_cast<std::int64_t>(count) : 0};
  EXPECT_THROW(red.inspect(wrong), usage_error);  // on every node, not just node 0
  tsm::barrier();
  xsm::free(y);
  // After free it says that no memory is bound, not that inspect() was never called.
  try {
    red.end_phase();
    ADD_FAILURE() << "end_phase after xsm::free did not throw";
  } catch (const usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("no memory is bound to this protocol"), std::string::npos) << e.what();
  }
}

struct triple {
  double x, y, z;  // 24 bytes: a 4 KiB block boundary falls inside an element
  triple operator+(const triple& o) const { return {x + o.x, y + o.y, z + o.z}; }
};

TEST(DirectReduction, ElementAcrossAChangeOfHomeIsRefused) {
  xsm::direct_reduction<triple> red;
  auto* y = xsm::alloc<triple>(2000, red);
  const std::vector<std::int64_t> none;
  if (nodes() > 1) {
    EXPECT_THROW(red.inspect(none), usage_error);
  } else {
    EXPECT_NO_THROW(red.inspect(none));
  }
  tsm::barrier();
  xsm::free(y);
}

TEST(DirectReduction, NegativeIndexOnOneNodeIsAnErrorOnEveryNode) {
  xsm::direct_reduction<double> red;
  auto* y = xsm::alloc<double>(count, red);
  const std::vector<std::int64_t> elements{node() == 0 ? -1 : 0};  // -1: once the "none" value
  const std::string what = squall::test::usage_error_of([&] { red.inspect(elements); });
  const std::string expected = node() == 0 ? "element -1 is outside" : "another node gave an element outside";
  EXPECT_NE(what.find(expected), std::string::npos) << what;
  tsm::barrier();
  xsm::free(y);
}

}  // namespace
