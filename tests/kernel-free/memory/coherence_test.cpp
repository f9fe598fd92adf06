// SPDX-License-Identifier: BSD-3-Clause
// Fault handlers that send messages and wait: the toy home-based write-invalidate protocol
// (home_protocol.hpp) across nodes, on the fault path SQUALL_FAULT_PATH selects.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include <squall/squall.hpp>
#include <squall/memory.hpp>

#include "home_protocol.hpp"
#include "test_protocols.hpp"

namespace {

using namespace squall;
using memory::testing::page;
using memory::tag;
using memory::testing::counter_delta;
using toy_coherence::home_protocol;


class Coherence : public ::testing::Test {
 protected:
  void allocate(std::size_t blocks) {
    proto = std::make_unique<home_protocol>(blocks);
    seg = memory::allocate(blocks * page, {.block_size = page, .handler = proto.get(), .initial = tag::invalid});
  }
  void TearDown() override { memory::free(seg); }  // collective: every node is done with it
  // Atomic, as threads of one node may read a word while another writes it.
  std::atomic_ref<std::uint64_t> word(memory::block_index b, std::size_t offset = 0) {
    return std::atomic_ref(*reinterpret_cast<std::uint64_t*>(seg.address_of(b) + offset));
  }

  std::unique_ptr<home_protocol> proto;
  memory::segment seg;
};

// Nodes 0 and 1 take turns on block 0 (home 0) and block 1 (home 1), one step per barrier;
// every fault, request and invalidation is predicted.
TEST_F(Coherence, ScriptedSequenceAcrossTwoNodesCountsExactly) {
  allocate(2);
  if (nodes() < 2) GTEST_SKIP() << "needs 2 nodes";
  const int me = node();
  counter_delta d;
  auto step = [&](int who, auto&& action) {
    if (me == who) action();
    barrier();
  };
  step(1, [&] { EXPECT_EQ(word(0).load(), 0u); });  // read miss; node 1 shares block 0
  step(0, [&] { word(0) = 7; });             // home's own write miss; invalidates node 1
  step(1, [&] { EXPECT_EQ(word(0).load(), 7u); });  // read miss; node 0 writes back, keeps ReadOnly
  step(1, [&] { word(0) = 8; });             // upgrade; invalidates node 0
  step(0, [&] { EXPECT_EQ(word(0).load(), 8u); });  // read miss; node 1 writes back
  step(0, [&] { word(1) = 9; });             // write miss on node 1's block
  step(1, [&] { EXPECT_EQ(word(1).load(), 9u); });  // home's own read miss; node 0 writes back
  step(1, [&] { EXPECT_EQ(word(0).load(), 8u); });  // hits: both keep ReadOnly copies
  step(0, [&] { EXPECT_EQ(word(1).load(), 9u); });

  struct expected {
    std::uint64_t read_invalid, write_invalid, write_readonly, requests, invalidations, writebacks;
  };
  const expected e[] = {{1, 2, 0, 3, 3, 2}, {3, 0, 1, 4, 2, 1}};
  const auto& c = proto->counts();
  if (me < 2) {
    EXPECT_EQ(d("memory.faults.read_invalid"), e[me].read_invalid);
    EXPECT_EQ(d("memory.faults.write_invalid"), e[me].write_invalid);
    EXPECT_EQ(d("memory.faults.write_readonly"), e[me].write_readonly);
    EXPECT_EQ(c.requests.load(), e[me].requests);
    EXPECT_EQ(c.invalidations.load(), e[me].invalidations);
    EXPECT_EQ(c.writebacks.load(), e[me].writebacks);
  } else {
    EXPECT_EQ(c.requests + c.invalidations, 0u);
  }
  EXPECT_EQ(c.refusals, 0u);
  EXPECT_EQ(seg.tag_of(0), me < 2 ? tag::read_only : tag::invalid);
}

// Each thread of each node increments its own counter in random blocks and reads others'
// counters; the schedule comes from seeded generators, so every node can replay every
// thread's and knows the final values.
TEST_F(Coherence, RandomReadsAndWritesEndWithTheSequentialAnswer) {
  constexpr std::size_t blocks = 16;
  constexpr int threads = 2, ops = 400;
  allocate(blocks);
  const int n = nodes(), me = node();
  // Bytes between counters: 256 (16 a block) up to 8 nodes, closer on more (12 nodes: 168).
  const std::size_t stride = std::min<std::size_t>(256, page / static_cast<std::size_t>(n * threads) / 8 * 8);
  ASSERT_GE(stride, sizeof(std::uint64_t)) << "more nodes than a block has counters for";
  auto offset = [&](int who, int t) { return static_cast<std::size_t>(who * threads + t) * stride; };
  struct op {
    memory::block_index block;
    bool write;
    int read_slot;
  };
  auto schedule = [&](int who, int t) {
    std::mt19937 rng(static_cast<unsigned>(1000 * who + t));
    std::vector<op> s;
    for (int i = 0; i < ops; ++i) {
      const auto b = static_cast<memory::block_index>(rng() % blocks);
      const bool write = rng() % 5 < 2;
      s.push_back({b, write, static_cast<int>(rng() % static_cast<unsigned>(n * threads))});
    }
    return s;
  };
  // final_count[slot][block]: increments every thread makes.
  std::vector<std::vector<std::uint64_t>> final_count(static_cast<std::size_t>(n * threads),
                                                      std::vector<std::uint64_t>(blocks));
  for (int who = 0; who < n; ++who) {
    for (int t = 0; t < threads; ++t) {
      for (const op& o : schedule(who, t)) final_count[static_cast<std::size_t>(who * threads + t)][o.block] += o.write;
    }
  }

  std::vector<int> errors(threads);
  auto run = [&](int t) {
    std::vector<std::uint64_t> mine(blocks);
    std::vector<std::vector<std::uint64_t>> seen(static_cast<std::size_t>(n * threads), std::vector<std::uint64_t>(blocks));
    for (const op& o : schedule(me, t)) {
      auto own = word(o.block, offset(me, t));
      if (own != mine[o.block]) ++errors[static_cast<std::size_t>(t)];  // read your own writes
      if (o.write) {
        own = own + 1;
        ++mine[o.block];
      } else {
        const int slot = o.read_slot;
        const std::uint64_t v = word(o.block, static_cast<std::size_t>(slot) * stride);
        auto& last = seen[static_cast<std::size_t>(slot)][o.block];
        if (v < last || v > final_count[static_cast<std::size_t>(slot)][o.block]) ++errors[static_cast<std::size_t>(t)];
        last = v;
      }
    }
  };
  counter_delta d;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) workers.emplace_back(run, t);
  for (auto& w : workers) w.join();
  EXPECT_EQ(errors, std::vector<int>(threads, 0)) << "values out of order during the run";

  barrier();
  for (memory::block_index b = 0; b < blocks; ++b) {
    for (int slot = 0; slot < n * threads; ++slot) {
      EXPECT_EQ(word(b, static_cast<std::size_t>(slot) * stride).load(), final_count[static_cast<std::size_t>(slot)][b])
          << "block " << b << ", counter of node " << slot / threads << " thread " << slot % threads;
    }
  }
  EXPECT_GT(proto->counts().requests.load(), 0u);
  // The fault path's sends never found a ring full (which would queue them on the heap).
  EXPECT_EQ(d("am.packets_queued"), 0u);
}

std::vector<std::byte> received;
int messages_received = 0;
void on_bytes(am::token&, am::payload bytes) {
  received.assign(bytes.begin(), bytes.end());
  ++messages_received;
}

// A payload in shared memory is made readable through the protocol (remote read misses)
// before the message layer takes the node lock, for send and bulk_send alike.
TEST_F(Coherence, PayloadsInSharedMemoryAreFetchedThroughTheProtocol) {
  allocate(3);
  if (nodes() < 2) GTEST_SKIP() << "needs 2 nodes";
  const int me = node();
  if (me == 0) {
    for (std::size_t i = 0; i < page; i += 8) word(0, i) = i;      // home 0
    for (std::size_t i = 0; i < page; i += 8) word(1, i) = i + 1;  // home 1: node 0 owns it now
  }
  received.clear();
  messages_received = 0;
  barrier();
  counter_delta d;
  if (me == 1) {
    am::send<on_bytes>(0, am::payload(seg.address_of(0), page));
    am::bulk_send<on_bytes>(0, am::payload(seg.address_of(1) + 8, 2 * page - 24)).wait_remote();
  }
  fence();
  if (me == 1) {
    EXPECT_EQ(d("memory.faults.read_invalid"), 3u);  // blocks 0, 1 and 2
    EXPECT_EQ(seg.tag_of(1), tag::read_only);
    EXPECT_EQ(proto->counts().requests.load(), 3u);
  }
  if (me == 0) {
    EXPECT_EQ(messages_received, 2);
    ASSERT_EQ(received.size(), 2 * page - 24);
    std::uint64_t first = 0, last = 1;
    std::memcpy(&first, received.data(), 8);
    std::memcpy(&last, received.data() + received.size() - 8, 8);
    EXPECT_EQ(first, 9u);  // block 1, offset 8, written by node 0
    EXPECT_EQ(last, 0u);   // block 2, never written
    EXPECT_EQ(proto->counts().writebacks.load(), 2u);  // blocks 0 and 1: node 0 wrote both
  }
}

}  // namespace
