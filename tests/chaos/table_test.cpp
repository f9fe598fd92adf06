// SPDX-License-Identifier: BSD-3-Clause
// Translation tables in both modes against the distribution every node computes from a common
// seed: lookups, batching (request counts), memory per node, and the block layout. Bad owned
// lists are in errors_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include <squall/chaos/translation_table.hpp>

#include "reference.hpp"

namespace chaos = squall::chaos;
using namespace chaos_test;
using chaos::table_mode;

namespace {

using squall::chaos::index;  // not ::index from <strings.h>

constexpr index small_page = 64;  // so that a few thousand elements spread over every node

chaos::translation_table make_table(const distribution& d, table_mode mode) {
  return chaos::translation_table(d.owned_by(me()), d.size, mode, small_page);
}

testing::AssertionResult lookups_match(const distribution& d, std::span<const index> queries,
                                       const std::vector<chaos::location>& got) {
  if (got.size() != queries.size()) {
    return testing::AssertionFailure() << got.size() << " locations for " << queries.size() << " queries";
  }
  return every(queries.size(), [&](std::size_t i) -> std::string {
    const index g = queries[i];
    const chaos::location want{d.owner_of(g), d.offset_of(g)};
    if (got[i] == want) return {};
    return "element " + std::to_string(g) + " at (" + std::to_string(got[i].owner) + ", " +
           std::to_string(got[i].offset) + "), expected (" + std::to_string(want.owner) + ", " +
           std::to_string(want.offset) + ")";
  });
}

// Every index once, in a random order, then a mixed pattern with many repeats.
std::vector<index> queries_for(const distribution& d, std::uint64_t seed) {
  std::vector<index> q;
  for (index g = 0; g < d.size; ++g) q.push_back(g);
  rng r(seed + static_cast<std::uint64_t>(me()));
  r.shuffle(q);
  const auto more = references(d, me(), 2000, refs::mixed, seed);
  q.insert(q.end(), more.begin(), more.end());
  return q;
}

class Table : public testing::TestWithParam<table_mode> {
 protected:
  // The tables live until every node has finished its lookups: a node that destroys its part
  // of a distributed table while another still looks up in it ends the job (see ~translation_table).
  void TearDown() override { squall::barrier(); }
  const chaos::translation_table& make(const distribution& d) {
    return tables_.emplace_back(make_table(d, GetParam()));
  }
  const chaos::translation_table& make_block(index n) {
    return tables_.emplace_back(chaos::translation_table::block(n, GetParam()));
  }

 private:
  std::deque<chaos::translation_table> tables_;
};

TEST_P(Table, DescribesThisNodesPart) {
  const auto d = random_distribution(3000, nodes(), 11);
  const auto& t = make(d);
  EXPECT_EQ(t.global_size(), 3000);
  EXPECT_EQ(t.mode(), GetParam());
  EXPECT_EQ(t.local_size(), static_cast<index>(d.owned_by(me()).size()));
  const auto owned = t.owned();
  EXPECT_TRUE(std::equal(owned.begin(), owned.end(), d.owned_by(me()).begin(), d.owned_by(me()).end()));
}

TEST_P(Table, LookupsMatchTheDistribution) {
  const auto d = random_distribution(3000, nodes(), 12);
  const auto& t = make(d);
  const auto q = queries_for(d, 12);
  EXPECT_TRUE(lookups_match(d, q, t.lookup(q)));

  std::vector<chaos::location> out(q.size());
  t.lookup(q, out);
  EXPECT_TRUE(lookups_match(d, q, out));
}

TEST_P(Table, NodeOwningNothing) {
  const auto d = random_distribution(2000, nodes(), 13, /*last_node_empty=*/true);
  const auto& t = make(d);
  if (nodes() > 1 && me() == nodes() - 1) {
EXPECT_EQ(t.local_size(), 0);
}
  const auto q = queries_for(d, 13);
  EXPECT_TRUE(lookups_match(d, q, t.lookup(q)));
}

TEST_P(Table, EmptyLookup) {
  const auto d = random_distribution(500, nodes(), 14);
  const auto& t = make(d);
  EXPECT_TRUE(t.lookup(std::span<const index>()).empty());
}

TEST_P(Table, LookupIsNotCollective) {
  // Only node 0 looks up; the others wait in a barrier, their handlers answer.
  const auto d = random_distribution(3000, nodes(), 15);
  const auto& t = make(d);
  if (me() == 0) {
    const auto q = queries_for(d, 15);
    EXPECT_TRUE(lookups_match(d, q, t.lookup(q)));
  }
  squall::barrier();
}

TEST_P(Table, LookupLargerThanOneRequestMessage) {
  // 40000 indices (320 KB of requests) cannot travel in one message to one node.
  const auto d = random_distribution(3000, nodes(), 16);
  const auto& t = make(d);
  const auto q = references(d, me(), 40000, refs::mixed, 16);
  EXPECT_TRUE(lookups_match(d, q, t.lookup(q)));
}

TEST_P(Table, LookupsAreBatched) {
  const auto d = random_distribution(2000, nodes(), 17);
  const auto& t = make(d);
  const auto q = queries_for(d, 17);  // 4000 indices: 32 KB of requests, under one message
  std::vector<chaos::location> got;
  const auto requests = growth("chaos.table.requests", [&] { got = t.lookup(q); });
  EXPECT_TRUE(lookups_match(d, q, got));
  if (GetParam() == table_mode::replicated) {
    EXPECT_EQ(requests, 0u);
  } else {
    EXPECT_LE(requests, static_cast<std::uint64_t>(nodes() - 1));
    // Every index was asked for: with 32 pages spread over the nodes some are elsewhere.
    if (nodes() > 1) {
EXPECT_GE(requests, 1u);
}
  }
  const auto lookups = growth("chaos.table.lookups", [&] { got = t.lookup(q); });
  EXPECT_EQ(lookups, q.size());
}

TEST_P(Table, BlockLayout) {
  for (const index size : {index{1001}, index{3}, index{0}}) {
    const auto d = block_distribution(size, nodes());
    const auto& t = make_block(size);
    EXPECT_EQ(t.global_size(), size);
    EXPECT_EQ(t.mode(), GetParam());
    EXPECT_EQ(t.local_size(), static_cast<index>(d.owned_by(me()).size())) << "size " << size;
    const auto owned = t.owned();
    EXPECT_TRUE(std::equal(owned.begin(), owned.end(), d.owned_by(me()).begin(), d.owned_by(me()).end()))
        << "size " << size;
    std::vector<index> q;
    for (index g = 0; g < size; ++g) q.push_back(g);
    EXPECT_TRUE(lookups_match(d, q, t.lookup(q))) << "size " << size;
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, Table, testing::Values(table_mode::replicated, table_mode::distributed), mode_name);

TEST(TableMemory, DistributedHoldsAboutOneNodesShare) {
  constexpr index size = 200000;
  const auto replicated = chaos::translation_table::block(size, table_mode::replicated);
  const auto distributed = chaos::translation_table::block(size, table_mode::distributed);
  const double r = static_cast<double>(replicated.memory_bytes());
  const double dist = static_cast<double>(distributed.memory_bytes());
  EXPECT_GE(r, static_cast<double>(size) * 4) << "a replicated table holds an entry per element";
  // About 1/nodes of the replicated table (pages do not divide evenly, and the owned list is
  // the same in both).
  EXPECT_GE(r / dist, nodes() / 2.0) << "replicated " << r << " B, distributed " << dist << " B";
  EXPECT_LE(r / dist, nodes() * 2.0) << "replicated " << r << " B, distributed " << dist << " B";

  // The replicated one grows with global_size: twice the elements, about twice the bytes.
  const auto twice = chaos::translation_table::block(2 * size, table_mode::replicated);
  EXPECT_GE(static_cast<double>(twice.memory_bytes()), 1.8 * r);
}

}  // namespace
