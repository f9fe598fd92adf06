// SPDX-License-Identifier: BSD-3-Clause
// node-update on the scripted irregular loop (update_pattern.hpp): each node declares the
// elements of other nodes it reads; results equal to the sequential reference; exact counts -
// no miss at all, only the declared elements pushed, one channel message per pair per phase in
// which the sender wrote; a block holding no declared element misses once per phase. One
// segment holding stache, block-update and node-update side by side; a block size that does
// not hold whole elements is a usage_error.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <squall/squall.hpp>
#include <squall/stats.hpp>
#include <squall/tsm.hpp>
#include <squall/xsm.hpp>
#include <squall/xsm/block_update.hpp>
#include <squall/xsm/node_update.hpp>

#include "update_pattern.hpp"
#include "usage_error_of.hpp"

namespace {

using namespace squall;
using update_test::layout;

constexpr int iterations = 4;

// Element indices from the start of the array (the protocol's range).
std::vector<std::int64_t> reads_of(const layout& where) {
  const auto read = where.elements_read(node());
  return {read.begin(), read.end()};
}

std::size_t wrong_among(const double* x, const std::vector<std::size_t>& which, std::size_t n) {
  const std::vector<double> ref = update_test::reference(n, iterations);
  std::size_t wrong = 0;
  for (const std::size_t i : which) wrong += x[i] == ref[i] ? 0 : 1;
  return wrong;
}

// What node-update keeps current here: this node's own elements and those it declared.
std::vector<std::size_t> kept_here(const layout& where) {
  std::vector<std::size_t> r;
  for (std::size_t i = 0; i < where.home.size(); ++i) {
    if (where.home[i] == node()) r.push_back(i);
  }
  for (const std::size_t i : where.elements_read(node())) r.push_back(i);
  return r;
}

// What this node sends: every element another node declared from it (`elements`, counted
// once per reader), and to how many readers.
struct sends {
  std::uint64_t elements = 0, readers = 0;
};
sends sends_of(const layout& where) {
  sends r;
  for (int c = 0; c < nodes(); ++c) {
    std::uint64_t from_me = 0;
    for (const std::size_t i : where.elements_read(c)) from_me += where.home[i] == node() ? 1 : 0;
    r.elements += from_me;
    r.readers += from_me > 0 ? 1 : 0;
  }
  return r;
}

// The scripted loop's array under `upd`, its initial values written and its reads declared.
struct declared_array {
  std::size_t n;
  double* x;
  layout where;
  explicit declared_array(xsm::node_update& upd)
      : n(update_test::elements_for(nodes())),
        x(xsm::alloc<double>(n, upd, {.homes = memory::home_policy::partition()})),
        where(x, n) {
    update_test::write_initial(x, where);
    upd.declare_reads(reads_of(where));
  }
};

TEST(NodeUpdate, PushesOnlyTheDeclaredElementsOnePerPairPerPhase) {
  xsm::node_update upd(sizeof(double));
  const declared_array a(upd);
  double* const x = a.x;
  const std::size_t n = a.n;
  const layout& where = a.where;
  const stats::snapshot before = stats::take();
  update_test::iterate({{x, &where}}, iterations);
  const stats::snapshot after = stats::take();
  // Where the kernel records the homes' stores, none faults; elsewhere each written block
  // faults once per phase in which it is written.
  const auto delta = [&](const char* counter) { return after.get(counter) - before.get(counter); };
  if (memory::segment_of(x).writes_recorded(0)) {
    EXPECT_EQ(delta("memory.faults.write_readonly"), 0u);
    EXPECT_GT(delta("memory.writes_recorded"), 0u);
  } else {
    EXPECT_EQ(delta("memory.writes_recorded"), 0u);
  }

  const std::uint64_t misses = upd.misses.value(), pushes = upd.pushes.value(), messages = upd.push_messages.value(),
                      bytes = upd.push_bytes.value(), phases = upd.phases.value();
  tsm::barrier();
  const auto [sent, readers] = sends_of(where);
  EXPECT_EQ(misses, 0u);
  // declare_reads sends everything once; then each iteration's second barrier (x written),
  // and nothing at the first (an end of round only).
  EXPECT_EQ(pushes, (iterations + 1) * sent);
  EXPECT_EQ(messages, (iterations + 1) * readers);
  EXPECT_EQ(bytes, (iterations + 1) * sent * sizeof(double));
  EXPECT_EQ(phases, 1u + 2u * iterations);
  if (nodes() > 1) {
    EXPECT_GT(sent, 0u);
  }
  // The pattern is the one a CHAOS gather would use: this node receives what it declared.
  std::uint64_t received = 0;
  for (const peer_lists& q : upd.pattern().peers) received += q.recv.size();
  EXPECT_EQ(received, where.elements_read(node()).size());
  EXPECT_EQ(wrong_among(x, kept_here(where), n), 0u);
  xsm::free(x);
}

// Every phase: the declared elements go out at every barrier, written or not, and the homes'
// stores neither fault nor are recorded after the first.
TEST(NodeUpdate, EveryPhasePushesAtEveryBarrierAndNeverFaultsOnHomeStores) {
  xsm::node_update upd(sizeof(double), xsm::node_update::push_policy::every_phase);
  const declared_array a(upd);
  const stats::snapshot before = stats::take();
  update_test::iterate({{a.x, &a.where}}, iterations);
  const stats::snapshot after = stats::take();
  const std::uint64_t pushes = upd.pushes.value(), messages = upd.push_messages.value(), phases = upd.phases.value();
  tsm::barrier();
  const auto [sent, readers] = sends_of(a.where);
  EXPECT_EQ(phases, 1u + 2u * iterations);
  EXPECT_EQ(pushes, phases * sent);
  EXPECT_EQ(messages, phases * readers);
  for (const char* counter : {"memory.faults.write_readonly", "memory.writes_recorded", "memory.write_scans"}) {
    EXPECT_EQ(after.get(counter) - before.get(counter), 0u) << counter;
  }
  EXPECT_EQ(wrong_among(a.x, kept_here(a.where), a.n), 0u);
  xsm::free(a.x);
}

// The loop synchronised by node-update's own phase end alone, no barrier: each node computes
// from its own elements and its copies, writes its own, then end_phase brings the copies up to
// date. Results equal the sequential reference; one push a reader a phase.
TEST(NodeUpdate, EndPhaseAloneKeepsTheLoopExact) {
  xsm::node_update upd(sizeof(double), xsm::node_update::push_policy::every_phase);
  const declared_array a(upd);
  double* const x = a.x;
  const std::size_t n = a.n;
  const layout& where = a.where;
  std::vector<double> y(n);
  for (int it = 0; it < iterations; ++it) {
    for (std::size_t i = 0; i < n; ++i) {
      if (where.home[i] == node()) y[i] = update_test::step(x, i, n);
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (where.home[i] == node()) x[i] = y[i];
    }
    upd.end_phase();
  }
  const std::uint64_t phases = upd.phases.value(), messages = upd.push_messages.value();
  tsm::barrier();
  EXPECT_EQ(phases, 1u + iterations);  // declare_reads and the loop's (read before the barrier)
  EXPECT_EQ(messages, phases * sends_of(where).readers);
  EXPECT_EQ(wrong_among(x, kept_here(where), n), 0u);
  xsm::free(x);
}

TEST(NodeUpdate, UndeclaredBlockMissesOncePerPhaseAndReadsCurrentValues) {
  if (nodes() < 2) GTEST_SKIP() << "needs 2 nodes";
  xsm::node_update upd(sizeof(double));
  const std::size_t n = update_test::per_block * static_cast<std::size_t>(nodes());
  double* x = xsm::alloc<double>(n, upd);  // block k homed on node k
  upd.declare_reads({});
  constexpr int phases = 3;
  double seen = 0;
  for (int p = 1; p <= phases; ++p) {
    if (node() == 1) x[0 + update_test::per_block] = p;  // node 1's block
    tsm::barrier();
    if (node() == 0) seen += x[update_test::per_block] + x[update_test::per_block + 1];
    tsm::barrier();
  }
  const std::uint64_t misses = upd.misses.value();
  tsm::barrier();
  EXPECT_EQ(misses, node() == 0 ? static_cast<std::uint64_t>(phases) : 0u);
  if (node() == 0) {
    EXPECT_EQ(seen, 1.0 + 2.0 + 3.0);
  }
  xsm::free(x);
}

TEST(NodeUpdate, MisuseIsAUsageError) {
  xsm::node_update odd(24);  // 4096 is no multiple of 24
  try {
    (void)xsm::alloc<char>(4096, odd);
    FAIL() << "no usage_error";
  } catch (const usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("do not hold whole elements of 24 bytes"), std::string::npos) << e.what();
  }
  EXPECT_THROW({ xsm::node_update none(0); }, usage_error);

  xsm::node_update upd(sizeof(double));
  double* x = xsm::alloc<double>(update_test::per_block, upd);
  const std::int64_t outside = node() == 0 ? 1'000'000 : 0;  // one node's mistake fails every node
  EXPECT_THROW(upd.declare_reads({&outside, 1}), usage_error);
  xsm::free(x);
}

// The probe's: end_phase after xsm::free (or before xsm::alloc) dereferenced the write
// tracker free had dropped, and the node died of SIGSEGV.
TEST(NodeUpdate, EndPhaseWithNoMemoryBoundIsAUsageError) {
  xsm::node_update upd(sizeof(double));
  const std::string before = squall::test::usage_error_of([&upd] { upd.end_phase(); });
  EXPECT_NE(before.find("node-update: end_phase with no memory bound to the protocol"), std::string::npos) << before;
  double* x = xsm::alloc<double>(update_test::per_block, upd);
  const std::int64_t first = 0;
  upd.declare_reads({&first, 1});
  upd.end_phase();
  tsm::barrier();
  xsm::free(x);
  const std::string after = squall::test::usage_error_of([&upd] { upd.end_phase(); });
  EXPECT_NE(after.find("(before xsm::alloc, or after xsm::free)"), std::string::npos) << after;
}

// Three data structures in one segment, neighbouring ranges: stache, block-update, node-update,
// each running the same loop in the same phases.
TEST(UpdateProtocols, StacheBlockUpdateAndNodeUpdateSideBySide) {
  const std::size_t n = update_test::elements_for(nodes());
  const std::size_t bytes = n * sizeof(double);
  xsm::block_update blocks(3);
  xsm::node_update elements(sizeof(double));
  auto* base = static_cast<double*>(
      xsm::alloc_bytes(3 * bytes, {xsm::range{bytes, bytes, &blocks}, xsm::range{2 * bytes, bytes, &elements}}));
  double* st = base;
  double* bu = base + n;
  double* nu = base + 2 * n;
  EXPECT_EQ(tsm::protocol_at(st).name(), "stache");
  EXPECT_EQ(tsm::protocol_at(bu).name(), "block-update");
  EXPECT_EQ(tsm::protocol_at(nu).name(), "node-update");
  const layout at_st(st, n), at_bu(bu, n), at_nu(nu, n);
  update_test::write_initial(st, at_st);
  update_test::write_initial(bu, at_bu);
  update_test::write_initial(nu, at_nu);
  std::vector<std::int64_t> declared;
  for (const std::size_t i : at_nu.elements_read(node())) declared.push_back(static_cast<std::int64_t>(i));
  elements.declare_reads(declared);
  tsm::barrier();  // the setup's barrier for the other two
  update_test::iterate({{st, &at_st}, {bu, &at_bu}, {nu, &at_nu}}, iterations);

  const std::uint64_t bu_after = blocks.misses_after_recording.value(), nu_misses = elements.misses.value();
  tsm::barrier();
  EXPECT_EQ(bu_after, 0u);
  EXPECT_EQ(nu_misses, 0u);
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  EXPECT_EQ(wrong_among(st, all, n), 0u);
  EXPECT_EQ(wrong_among(bu, all, n), 0u);
  EXPECT_EQ(wrong_among(nu, kept_here(at_nu), n), 0u);
  xsm::free(base);
}

}  // namespace
