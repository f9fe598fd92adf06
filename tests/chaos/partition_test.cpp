// SPDX-License-Identifier: BSD-3-Clause
// Partitioners against sequential references every node computes from a common seed: RCB
// (exact, against a sequential bisection), RIB, METIS, cut edges, the iteration partitioners,
// and every kind of bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include <squall/chaos/exchange.hpp>
#include <squall/chaos/partition.hpp>
#include <squall/chaos/translation_table.hpp>

#include "reference.hpp"

namespace chaos = squall::chaos;
using namespace chaos_test;
using chaos::iteration_rule;
using chaos::partition_quality;
using chaos::partition_result;
using chaos::table_mode;

namespace {

using squall::chaos::index;  // not the C library's index()

// ---------------------------------------------------------------------------------------------
// Meshes: points near the nodes of a structured grid (jittered, so no two coordinates are
// equal), numbered in a shuffled order, with the grid's edges.

struct mesh {
  int dim = 0;
  index size = 0;
  std::vector<double> coords;  // dim per point, by global number
  std::vector<index> from, to;  // edges, each listed once
  const double* point(index g) const { return &coords[static_cast<std::size_t>(g * dim)]; }
};

mesh grid_mesh(std::array<int, 3> extent, int dim, std::uint64_t seed) {
  rng r(seed);
  auto uniform = [&r] { return static_cast<double>(r.next() >> 11) / 9007199254740992.0; };
  mesh m;
  m.dim = dim;
  for (int a = dim; a < 3; ++a) extent[static_cast<std::size_t>(a)] = 1;
  const int nx = extent[0], ny = extent[1], nz = extent[2];
  m.size = static_cast<index>(nx) * ny * nz;
  std::vector<index> number(static_cast<std::size_t>(m.size));  // grid cell -> global number
  std::iota(number.begin(), number.end(), index{0});
  r.shuffle(number);
  m.coords.resize(static_cast<std::size_t>(m.size * dim));
  auto cell = [&](int x, int y, int z) { return (static_cast<index>(z) * ny + y) * nx + x; };
  for (int z = 0; z < nz; ++z) {
    for (int y = 0; y < ny; ++y) {
      for (int x = 0; x < nx; ++x) {
        const index g = number[static_cast<std::size_t>(cell(x, y, z))];
        const int at[3] = {x, y, z};
        for (int a = 0; a < dim; ++a) m.coords[static_cast<std::size_t>(g * dim + a)] = at[a] + 0.6 * (uniform() - 0.5);
        auto edge_to = [&](int x2, int y2, int z2) {
          m.from.push_back(g);
          m.to.push_back(number[static_cast<std::size_t>(cell(x2, y2, z2))]);
        };
        if (x + 1 < nx) edge_to(x + 1, y, z);
        if (y + 1 < ny) edge_to(x, y + 1, z);
        if (z + 1 < nz) edge_to(x, y, z + 1);
      }
    }
  }
  return m;
}

// The coordinates (and weights) of this node's points, in its local order.
std::vector<double> local_coords(const mesh& m, const distribution& d) {
  std::vector<double> out;
  for (index g : d.owned_by(me())) out.insert(out.end(), m.point(g), m.point(g) + m.dim);
  return out;
}
std::vector<double> local_values(const std::vector<double>& all, const distribution& d) {
  std::vector<double> out;
  for (index g : d.owned_by(me())) out.push_back(all[static_cast<std::size_t>(g)]);
  return out;
}

// Every node's owners, by global number (each node only has its own elements' parts).
std::vector<int> owners_by_global(const distribution& d, std::span<const int> mine) {
  const std::vector<int> gathered = chaos::allgather(mine);
  std::vector<int> owner(static_cast<std::size_t>(d.size), -1);
  std::size_t k = 0;
  for (const auto& list : d.owned) {
    for (index g : list) owner[static_cast<std::size_t>(g)] = gathered[k++];
  }
  return owner;
}

// This node's share of the edges (each edge listed on one node only).
struct edge_share {
  std::vector<index> from, to;
};
edge_share my_edges(const mesh& m) {
  edge_share s;
  const auto n = static_cast<index>(m.from.size());
  for (index e = me(); e < n; e += nodes()) {
    s.from.push_back(m.from[static_cast<std::size_t>(e)]);
    s.to.push_back(m.to[static_cast<std::size_t>(e)]);
  }
  return s;
}

index sequential_cut(const mesh& m, const std::vector<int>& owner) {
  index cut = 0;
  for (std::size_t e = 0; e < m.from.size(); ++e) {
    cut += owner[static_cast<std::size_t>(m.from[e])] != owner[static_cast<std::size_t>(m.to[e])];
  }
  return cut;
}

// The table of the distribution `owner` (by global number) describes.
chaos::translation_table table_of(const std::vector<int>& owner, table_mode mode = table_mode::replicated) {
  std::vector<index> mine;
  for (std::size_t g = 0; g < owner.size(); ++g) {
    if (owner[g] == me()) mine.push_back(static_cast<index>(g));
  }
  return chaos::translation_table(mine, static_cast<index>(owner.size()), mode, 64);
}

// ---------------------------------------------------------------------------------------------
// References and checks.

// Sequential RCB: the longest side of the bounding box, sorted, cut so that each part gets
// N/parts elements (the first N % parts one more). Exact for points with distinct coordinates.
void reference_rcb(const mesh& m, std::vector<index> ids, int first, int parts, int all_parts, std::vector<int>& owner) {
  if (parts == 1) {
    for (index g : ids) owner[static_cast<std::size_t>(g)] = first;
    return;
  }
  int axis = 0;
  double extent[3];
  for (int a = 0; a < m.dim; ++a) {
    auto [lo, hi] = std::minmax_element(ids.begin(), ids.end(), [&](index x, index y) { return m.point(x)[a] < m.point(y)[a]; });
    extent[a] = m.point(*hi)[a] - m.point(*lo)[a];
    if (extent[a] > extent[axis]) axis = a;
  }
  std::sort(ids.begin(), ids.end(), [&](index x, index y) { return m.point(x)[axis] < m.point(y)[axis]; });
  const int left = parts / 2;
  index left_size = 0;
  for (int p = first; p < first + left; ++p) left_size += m.size / all_parts + (p < m.size % all_parts ? 1 : 0);
  reference_rcb(m, {ids.begin(), ids.begin() + left_size}, first, left, all_parts, owner);
  reference_rcb(m, {ids.begin() + left_size, ids.end()}, first + left, parts - left, all_parts, owner);
}

std::vector<int> reference_rcb(const mesh& m, int parts) {
  std::vector<index> ids(static_cast<std::size_t>(m.size));
  std::iota(ids.begin(), ids.end(), index{0});
  std::vector<int> owner(ids.size(), -1);
  reference_rcb(m, ids, 0, parts, parts, owner);
  return owner;
}

struct part_sizes {
  std::vector<index> elements;
  std::vector<double> weight;
};
part_sizes sizes_of(const std::vector<int>& owner, int parts, const std::vector<double>& weights = {}) {
  part_sizes s{std::vector<index>(static_cast<std::size_t>(parts), 0), std::vector<double>(static_cast<std::size_t>(parts), 0.0)};
  for (std::size_t g = 0; g < owner.size(); ++g) {
    const auto p = static_cast<std::size_t>(owner[g]);
    ++s.elements[p];
    s.weight[p] += weights.empty() ? 1.0 : weights[g];
  }
  return s;
}

// Owners within [0, parts), and the figures those owners give, the same on every node.
testing::AssertionResult valid_partition(const std::vector<int>& owner, int parts, const partition_quality& q,
                                         const std::vector<double>& weights = {}) {
  for (std::size_t g = 0; g < owner.size(); ++g) {
    if (owner[g] < 0 || owner[g] >= parts) return testing::AssertionFailure() << "element " << g << " in part " << owner[g];
  }
  const part_sizes s = sizes_of(owner, parts, weights);
  const double total = std::accumulate(s.weight.begin(), s.weight.end(), 0.0);
  const auto [min_e, max_e] = std::minmax_element(s.elements.begin(), s.elements.end());
  const auto [min_w, max_w] = std::minmax_element(s.weight.begin(), s.weight.end());
  auto near = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); };
  if (q.parts != parts || q.min_elements != *min_e || q.max_elements != *max_e || !near(q.min_weight, *min_w) ||
      !near(q.max_weight, *max_w) || !near(q.imbalance, *max_w / (total / parts))) {
    return testing::AssertionFailure() << "quality (parts " << q.parts << ", elements " << q.min_elements << ".."
                                       << q.max_elements << ", weight " << q.min_weight << ".." << q.max_weight
                                       << ", imbalance " << q.imbalance << ") disagrees with the owners (elements "
                                       << *min_e << ".." << *max_e << ", weight " << *min_w << ".." << *max_w << ")";
  }
  const std::vector<partition_quality> everyone = chaos::allgather(std::span<const partition_quality>(&q, 1));
  for (const partition_quality& o : everyone) {
    if (o.parts != q.parts || o.min_elements != q.min_elements || o.max_elements != q.max_elements ||
        o.min_weight != q.min_weight || o.max_weight != q.max_weight || o.imbalance != q.imbalance) {
      return testing::AssertionFailure() << "the quality differs between nodes";
    }
  }
  return testing::AssertionSuccess();
}

testing::AssertionResult sizes_within_one(const std::vector<int>& owner, int parts) {
  const part_sizes s = sizes_of(owner, parts);
  const auto [lo, hi] = std::minmax_element(s.elements.begin(), s.elements.end());
  if (*hi - *lo <= 1 && *lo == static_cast<index>(owner.size()) / parts) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "part sizes range over " << *lo << ".." << *hi << " for " << owner.size()
                                     << " elements in " << parts << " parts";
}

testing::AssertionResult same_owners(const std::vector<int>& got, const std::vector<int>& want) {
  return every(got.size(), [&](std::size_t g) -> std::string {
    return describe(g, got[g], want[g]);
  });
}

// The parts counts worth trying with this many nodes: nodes() and a few that are not powers of two.
std::vector<int> part_counts() {
  std::vector<int> out{0};  // 0: nodes()
  for (int k : {3, 5, 7}) {
    if (k != nodes()) out.push_back(k);
  }
  return out;
}
int resolved(int parts) { return parts == 0 ? nodes() : parts; }

// ---------------------------------------------------------------------------------------------
// RCB

TEST(Rcb, MatchesSequentialBisectionAndBalancesIn2D) {
  const mesh m = grid_mesh({40, 30, 1}, 2, 11);
  const distribution d = block_distribution(m.size, nodes());
  const std::vector<double> coords = local_coords(m, d);
  for (int parts : part_counts()) {
    const partition_result r = chaos::rcb(coords, 2, {}, parts);
    ASSERT_EQ(r.owner.size(), d.owned_by(me()).size());
    const std::vector<int> owner = owners_by_global(d, r.owner);
    const int k = resolved(parts);
    EXPECT_TRUE(valid_partition(owner, k, r.quality)) << k << " parts";
    EXPECT_TRUE(sizes_within_one(owner, k)) << k << " parts";
    EXPECT_TRUE(same_owners(owner, reference_rcb(m, k))) << k << " parts";
  }
}

TEST(Rcb, MatchesSequentialBisectionAndBalancesIn3D) {
  const mesh m = grid_mesh({12, 10, 9}, 3, 12);
  const distribution d = block_distribution(m.size, nodes());
  const std::vector<double> coords = local_coords(m, d);
  for (int parts : part_counts()) {
    const partition_result r = chaos::rcb(coords, 3, {}, parts);
    const std::vector<int> owner = owners_by_global(d, r.owner);
    const int k = resolved(parts);
    EXPECT_TRUE(valid_partition(owner, k, r.quality)) << k << " parts";
    EXPECT_TRUE(sizes_within_one(owner, k)) << k << " parts";
    EXPECT_TRUE(same_owners(owner, reference_rcb(m, k))) << k << " parts";
  }
}

TEST(Rcb, OneDimensionAndOneElementPerPart) {
  // 1-D, as many parts as elements: each part is one point, in coordinate order.
  rng r(13);
  const index n = 3 * nodes() + 1;
  std::vector<double> x(static_cast<std::size_t>(n));
  for (index g = 0; g < n; ++g) x[static_cast<std::size_t>(g)] = static_cast<double>(r.below(1000000)) + 1e-3 * static_cast<double>(g);
  const distribution d = random_distribution(n, nodes(), 14);
  std::vector<double> mine;
  for (index g : d.owned_by(me())) mine.push_back(x[static_cast<std::size_t>(g)]);
  const partition_result res = chaos::rcb(mine, 1, {}, static_cast<int>(n));
  const std::vector<int> owner = owners_by_global(d, res.owner);
  std::vector<index> by_x(static_cast<std::size_t>(n));
  std::iota(by_x.begin(), by_x.end(), index{0});
  std::sort(by_x.begin(), by_x.end(), [&](index a, index b) { return x[static_cast<std::size_t>(a)] < x[static_cast<std::size_t>(b)]; });
  for (index rank = 0; rank < n; ++rank) EXPECT_EQ(owner[static_cast<std::size_t>(by_x[static_cast<std::size_t>(rank)])], rank);
  EXPECT_EQ(res.quality.min_elements, 1);
  EXPECT_EQ(res.quality.max_elements, 1);
}

TEST(Rcb, DoesNotDependOnHowThePointsAreSpread) {
  // The same points spread at random (and some nodes without any): the same parts.
  const mesh m = grid_mesh({30, 20, 1}, 2, 15);
  const distribution d = random_distribution(m.size, nodes(), 16, /*last_node_empty=*/true);
  const partition_result r = chaos::rcb(local_coords(m, d), 2);
  EXPECT_TRUE(same_owners(owners_by_global(d, r.owner), reference_rcb(m, nodes())));
}

TEST(Rcb, EqualCoordinatesAreBrokenByElementIdentity) {
  // Every point at the same place: still exactly balanced, and the same answer when repeated.
  const index n = 10 * nodes() + 3;
  const distribution d = block_distribution(n, nodes());
  const std::vector<double> coords(2 * d.owned_by(me()).size(), 1.5);
  for (int parts : part_counts()) {
    const partition_result a = chaos::rcb(coords, 2, {}, parts), b = chaos::rcb(coords, 2, {}, parts);
    EXPECT_EQ(a.owner, b.owner);
    const std::vector<int> owner = owners_by_global(d, a.owner);
    EXPECT_TRUE(valid_partition(owner, resolved(parts), a.quality));
    EXPECT_TRUE(sizes_within_one(owner, resolved(parts)));
  }
}

TEST(Rcb, CutsFarFewerEdgesThanTheBlockDistributionOfAShuffledMesh) {
  const mesh m = grid_mesh({40, 40, 1}, 2, 17);
  const distribution d = block_distribution(m.size, nodes());
  const edge_share edges = my_edges(m);
  const chaos::cut_figures block = chaos::cut_edges(chaos::translation_table::block(m.size), edges.from, edges.to);
  EXPECT_EQ(block.edges, static_cast<index>(m.from.size()));
  EXPECT_EQ(block.cut, sequential_cut(m, d.owner));

  const partition_result r = chaos::rcb(local_coords(m, d), 2);
  const std::vector<int> owner = owners_by_global(d, r.owner);
  const chaos::cut_figures rcb = chaos::cut_edges(table_of(owner, table_mode::distributed), edges.from, edges.to);
  EXPECT_EQ(rcb.edges, static_cast<index>(m.from.size()));
  EXPECT_EQ(rcb.cut, sequential_cut(m, owner));
  if (nodes() > 1) {
    EXPECT_LT(rcb.fraction(), 0.25 * block.fraction()) << "rcb " << rcb.cut << ", block " << block.cut;
  } else {
    EXPECT_EQ(rcb.cut, 0);
  }
}

TEST(Rcb, WeightedPartsAreWithinOneElementOfTheIdealWeight) {
  const mesh m = grid_mesh({36, 30, 1}, 2, 18);
  rng r(19);
  std::vector<double> weight(static_cast<std::size_t>(m.size));
  for (double& w : weight) w = 1.0 + static_cast<double>(r.below(1000)) / 1000.0;  // 1 .. 2
  const double heaviest = *std::max_element(weight.begin(), weight.end());
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  const distribution d = random_distribution(m.size, nodes(), 20);
  const std::vector<double> coords = local_coords(m, d), mine = local_values(weight, d);
  for (int parts : part_counts()) {
    const partition_result res = chaos::rcb(coords, 2, mine, parts);
    const std::vector<int> owner = owners_by_global(d, res.owner);
    const int k = resolved(parts);
    EXPECT_TRUE(valid_partition(owner, k, res.quality, weight)) << k << " parts";
    const part_sizes s = sizes_of(owner, k, weight);
    for (int p = 0; p < k; ++p) {
      EXPECT_LE(std::abs(s.weight[static_cast<std::size_t>(p)] - total / k), heaviest) << "part " << p << " of " << k;
    }
  }
}

TEST(Rcb, WeightsThatAreAllZeroStillGiveEveryPartAnElement) {
  const index n = 5 * nodes();
  const distribution d = block_distribution(n, nodes());
  std::vector<double> coords;
  for (index g : d.owned_by(me())) coords.push_back(static_cast<double>(g));
  const std::vector<double> zero(coords.size(), 0.0);
  const partition_result res = chaos::rcb(coords, 1, zero);
  EXPECT_GE(res.quality.min_elements, 1);
  EXPECT_EQ(res.quality.max_weight, 0.0);
  EXPECT_EQ(res.quality.imbalance, 1.0);
}

// ---------------------------------------------------------------------------------------------
// RIB

TEST(Rib, BalancesAndIsTheSameEveryTime) {
  const mesh m = grid_mesh({14, 11, 8}, 3, 21);
  const distribution d = random_distribution(m.size, nodes(), 22);
  const std::vector<double> coords = local_coords(m, d);
  for (int parts : part_counts()) {
    const partition_result a = chaos::rib(coords, 3, {}, parts), b = chaos::rib(coords, 3, {}, parts);
    EXPECT_EQ(a.owner, b.owner);
    const std::vector<int> owner = owners_by_global(d, a.owner);
    const int k = resolved(parts);
    EXPECT_TRUE(valid_partition(owner, k, a.quality)) << k << " parts";
    EXPECT_TRUE(sizes_within_one(owner, k)) << k << " parts";
  }
}

TEST(Rib, CutsAcrossThePrincipalAxis) {
  // Points strung along the direction (1, 2, 3) (with a little noise across it): every cut is
  // across the line, so the parts are runs of the line, in order.
  rng r(23);
  const index n = 40 * nodes() + 5;
  std::vector<double> t(static_cast<std::size_t>(n)), coords;
  for (index g = 0; g < n; ++g) t[static_cast<std::size_t>(g)] = static_cast<double>(r.below(1u << 30)) / 1024.0;
  const distribution d = random_distribution(n, nodes(), 24);
  for (index g : d.owned_by(me())) {
    for (int a = 0; a < 3; ++a) {
      coords.push_back((a + 1) * t[static_cast<std::size_t>(g)] + 1e-6 * static_cast<double>(r.below(100)));
    }
  }
  const int parts = std::min<int>(7, static_cast<int>(n));
  const partition_result res = chaos::rib(coords, 3, {}, parts);
  const std::vector<int> owner = owners_by_global(d, res.owner);
  std::vector<index> along(static_cast<std::size_t>(n));
  std::iota(along.begin(), along.end(), index{0});
  std::sort(along.begin(), along.end(), [&](index a, index b) { return t[static_cast<std::size_t>(a)] < t[static_cast<std::size_t>(b)]; });
  std::vector<int> want(static_cast<std::size_t>(n));
  index rank = 0;
  for (int p = 0; p < parts; ++p) {
    for (index c = 0; c < n / parts + (p < n % parts ? 1 : 0); ++c) want[static_cast<std::size_t>(along[static_cast<std::size_t>(rank++)])] = p;
  }
  // The axis points along (1, 2, 3), not against it (its largest component is positive).
  EXPECT_TRUE(same_owners(owner, want));
}

TEST(Rib, CutsFewerEdgesThanTheBlockDistributionAndTakesWeights) {
  const mesh m = grid_mesh({30, 30, 1}, 2, 25);
  const distribution d = block_distribution(m.size, nodes());
  const edge_share edges = my_edges(m);
  const partition_result res = chaos::rib(local_coords(m, d), 2);
  const std::vector<int> owner = owners_by_global(d, res.owner);
  EXPECT_TRUE(sizes_within_one(owner, nodes()));
  const chaos::cut_figures rib = chaos::cut_edges(table_of(owner), edges.from, edges.to);
  EXPECT_EQ(rib.cut, sequential_cut(m, owner));
  if (nodes() > 1) {
    EXPECT_LT(rib.fraction(), 0.25 * static_cast<double>(sequential_cut(m, d.owner)) / static_cast<double>(m.from.size()));
  }

  std::vector<double> weight(static_cast<std::size_t>(m.size));
  for (std::size_t g = 0; g < weight.size(); ++g) weight[g] = 1.0 + static_cast<double>(g % 3);
  const partition_result w = chaos::rib(local_coords(m, d), 2, local_values(weight, d), 3);
  const std::vector<int> weighted_owner = owners_by_global(d, w.owner);
  EXPECT_TRUE(valid_partition(weighted_owner, 3, w.quality, weight));
  const part_sizes s = sizes_of(weighted_owner, 3, weight);
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  for (double pw : s.weight) EXPECT_LE(std::abs(pw - total / 3), 3.0);
}

// ---------------------------------------------------------------------------------------------
// METIS

struct local_graph {
  std::vector<index> offsets{0}, adjacency;
};
// This node's vertices' adjacency lists (both directions of every mesh edge).
local_graph graph_of(const mesh& m, std::span<const index> mine) {
  std::vector<std::vector<index>> adjacent(static_cast<std::size_t>(m.size));
  for (std::size_t e = 0; e < m.from.size(); ++e) {
    adjacent[static_cast<std::size_t>(m.from[e])].push_back(m.to[e]);
    adjacent[static_cast<std::size_t>(m.to[e])].push_back(m.from[e]);
  }
  local_graph g;
  for (index v : mine) {
    const auto& a = adjacent[static_cast<std::size_t>(v)];
    g.adjacency.insert(g.adjacency.end(), a.begin(), a.end());
    g.offsets.push_back(static_cast<index>(g.adjacency.size()));
  }
  return g;
}

TEST(Metis, GivesAValidPartitionCuttingFewerEdgesThanBlocks) {
  const mesh m = grid_mesh({32, 32, 1}, 2, 26);
  const distribution d = random_distribution(m.size, nodes(), 27);
  const chaos::translation_table table(d.owned_by(me()), m.size);
  const local_graph g = graph_of(m, d.owned_by(me()));
  const edge_share edges = my_edges(m);
  for (int parts : part_counts()) {
    const int k = resolved(parts);
    const partition_result a = chaos::graph_partition(table, g.offsets, g.adjacency, {}, parts);
    const partition_result b = chaos::graph_partition(table, g.offsets, g.adjacency, {}, parts);
    EXPECT_EQ(a.owner, b.owner) << "the same graph partitioned twice";
    const std::vector<int> owner = owners_by_global(d, a.owner);
    EXPECT_TRUE(valid_partition(owner, k, a.quality)) << k << " parts";
    EXPECT_LE(a.quality.imbalance, 1.1) << k << " parts";
    if (k == nodes()) {  // a table needs a part per node
      const chaos::cut_figures cut = chaos::cut_edges(table_of(owner), edges.from, edges.to);
      EXPECT_EQ(cut.cut, sequential_cut(m, owner));
    }
    if (k > 1) {
      EXPECT_LT(sequential_cut(m, owner), sequential_cut(m, block_distribution(m.size, k).owner) / 4) << k << " parts";
    }
  }
}

TEST(Metis, OnePartAndVertexWeights) {
  const mesh m = grid_mesh({20, 10, 1}, 2, 28);
  const distribution d = block_distribution(m.size, nodes());
  const chaos::translation_table table(d.owned_by(me()), m.size);
  const local_graph g = graph_of(m, d.owned_by(me()));
  std::vector<double> weight(static_cast<std::size_t>(m.size));
  for (std::size_t v = 0; v < weight.size(); ++v) weight[v] = 0.5 + static_cast<double>(v % 4);
  const std::vector<double> mine = local_values(weight, d);

  const partition_result one = chaos::graph_partition(table, g.offsets, g.adjacency, {}, 1);
  EXPECT_EQ(one.owner, std::vector<int>(d.owned_by(me()).size(), 0));
  EXPECT_TRUE(valid_partition(owners_by_global(d, one.owner), 1, one.quality));
  const partition_result one_weighted = chaos::graph_partition(table, g.offsets, g.adjacency, mine, 1);
  EXPECT_TRUE(valid_partition(owners_by_global(d, one_weighted.owner), 1, one_weighted.quality, weight));

  const partition_result w = chaos::graph_partition(table, g.offsets, g.adjacency, mine, 4);
  const std::vector<int> owner = owners_by_global(d, w.owner);
  EXPECT_TRUE(valid_partition(owner, 4, w.quality, weight));
  EXPECT_LE(w.quality.imbalance, 1.1);
}

TEST(Metis, AGraphWithoutEdges) {
  const index n = 6 * nodes() + 2;
  const distribution d = block_distribution(n, nodes());
  const chaos::translation_table table(d.owned_by(me()), n);
  const std::vector<index> offsets(d.owned_by(me()).size() + 1, 0);
  const int parts = std::min(3, static_cast<int>(n));
  const partition_result r = chaos::graph_partition(table, offsets, {}, {}, parts);
  EXPECT_TRUE(valid_partition(owners_by_global(d, r.owner), parts, r.quality));
}

// ---------------------------------------------------------------------------------------------
// Cut edges

TEST(CutEdges, CountsEdgesWhoseEndsHaveDifferentOwners) {
  const mesh m = grid_mesh({25, 20, 1}, 2, 29);
  const distribution d = random_distribution(m.size, nodes(), 30, /*last_node_empty=*/true);
  const edge_share edges = my_edges(m);
  for (table_mode mode : {table_mode::replicated, table_mode::distributed}) {
    const chaos::cut_figures f = chaos::cut_edges(chaos::translation_table(d.owned_by(me()), m.size, mode, 64), edges.from, edges.to);
    EXPECT_EQ(f.edges, static_cast<index>(m.from.size()));
    EXPECT_EQ(f.cut, sequential_cut(m, d.owner));
  }
  // A node listing no edges at all still takes part.
  const bool list = me() == 0;
  const chaos::cut_figures f = chaos::cut_edges(chaos::translation_table(d.owned_by(me()), m.size),
                                                list ? std::span<const index>(m.from) : std::span<const index>(),
                                                list ? std::span<const index>(m.to) : std::span<const index>());
  EXPECT_EQ(f.cut, sequential_cut(m, d.owner));
  EXPECT_DOUBLE_EQ(f.fraction(), static_cast<double>(f.cut) / static_cast<double>(m.from.size()));
}

// ---------------------------------------------------------------------------------------------
// Iteration partitioners

struct iterations {
  std::vector<index> offsets{0}, refs;
};
// Node `node`'s iterations: 0 to 5 references each (never 0 when `at_least_one`), some into a
// small hot set so that majorities and ties both occur.
iterations iterations_of(int node, index elements, bool at_least_one, std::uint64_t seed) {
  rng r(seed * 7919 + static_cast<std::uint64_t>(node));
  iterations it;
  for (int i = 0; i < 300; ++i) {
    const auto count = (at_least_one ? 1 : 0) + r.below(at_least_one ? 5 : 6);
    for (std::uint64_t k = 0; k < count; ++k) {
      it.refs.push_back(static_cast<index>(r.below(k % 2 ? 8 : static_cast<std::uint64_t>(elements))));
    }
    it.offsets.push_back(static_cast<index>(it.refs.size()));
  }
  return it;
}

// The rules, sequentially: the owner of the first reference; the owner of most references,
// ties to the node given the fewest of these iterations so far, then the lowest node.
std::vector<int> reference_iterations(const distribution& d, const iterations& it, iteration_rule rule) {
  std::vector<index> load(static_cast<std::size_t>(nodes()), 0);
  std::vector<int> out;
  for (std::size_t i = 0; i + 1 < it.offsets.size(); ++i) {
    int pick;
    if (rule == iteration_rule::owner_computes) {
      pick = d.owner_of(it.refs[static_cast<std::size_t>(it.offsets[i])]);
    } else {
      std::vector<index> votes(static_cast<std::size_t>(nodes()), 0);
      for (index j = it.offsets[i]; j < it.offsets[i + 1]; ++j) ++votes[static_cast<std::size_t>(d.owner_of(it.refs[static_cast<std::size_t>(j)]))];
      pick = 0;
      for (int p = 1; p < nodes(); ++p) {
        const auto up = static_cast<std::size_t>(p), ub = static_cast<std::size_t>(pick);
        if (votes[up] > votes[ub] || (votes[up] == votes[ub] && load[up] < load[ub])) pick = p;
      }
    }
    ++load[static_cast<std::size_t>(pick)];
    out.push_back(pick);
  }
  return out;
}

TEST(Iterations, OwnerAndAlmostOwnerComputesMatchTheRules) {
  const index n = 500;
  const distribution d = random_distribution(n, nodes(), 31);
  for (table_mode mode : {table_mode::replicated, table_mode::distributed}) {
    const chaos::translation_table table(d.owned_by(me()), n, mode, 64);
    for (iteration_rule rule : {iteration_rule::owner_computes, iteration_rule::almost_owner_computes}) {
      const iterations it = iterations_of(me(), n, rule == iteration_rule::owner_computes, 32);
      const std::vector<int> got = chaos::partition_iterations(table, it.offsets, it.refs, rule);
      const std::vector<int> want = reference_iterations(d, it, rule);
      ASSERT_EQ(got.size(), want.size());
      EXPECT_TRUE(every(got.size(), [&](std::size_t i) { return describe(i, got[i], want[i]); }));
    }
    squall::barrier();  // no node looks anything up any more: the table may go
  }
  const chaos::translation_table table(d.owned_by(me()), n);
  EXPECT_TRUE(chaos::partition_iterations(table, {}, {}, iteration_rule::owner_computes).empty());
}

TEST(Iterations, AlmostOwnerSpreadsTiesOverTheLeastLoadedNodes) {
  // Iterations referencing one element of every node once: all tie, so they go round the nodes.
  const index n = 4 * nodes();
  const distribution d = block_distribution(n, nodes());
  const chaos::translation_table table(d.owned_by(me()), n);
  iterations it;
  for (int i = 0; i < 3 * nodes(); ++i) {
    for (int p = nodes() - 1; p >= 0; --p) it.refs.push_back(d.owned_by(p)[0]);
    it.offsets.push_back(static_cast<index>(it.refs.size()));
  }
  const std::vector<int> got = chaos::partition_iterations(table, it.offsets, it.refs, iteration_rule::almost_owner_computes);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], static_cast<int>(i) % nodes());
}

// ---------------------------------------------------------------------------------------------
// Bad input: a usage_error on every node, even when only one node's input is wrong.

template <class F>
void expect_usage_error(F call, const char* what) {
  EXPECT_THROW(call(), squall::usage_error) << what;
}

TEST(PartitionErrors, GeometricPartitioners) {
  const index per_node = 4;
  std::vector<double> xy(2 * per_node), w(per_node, 1.0);
  for (std::size_t i = 0; i < xy.size(); ++i) xy[i] = static_cast<double>(i + 10 * static_cast<std::size_t>(me()));
  const bool first = me() == 0;
  for (auto partition : {&chaos::rcb, &chaos::rib}) {
    expect_usage_error([&] { partition(xy, 0, {}, 0); }, "dim 0");
    expect_usage_error([&] { partition(xy, 4, {}, 0); }, "dim 4");
    expect_usage_error([&] { partition(std::span<const double>(xy).first(first ? 7 : 8), 2, {}, 0); }, "7 coordinates in 2-D");
    expect_usage_error([&] { partition(xy, 2, std::span<const double>(w).first(first ? 3 : 4), 0); }, "weights size");
    std::vector<double> negative = w;
    if (first) negative[1] = -1;
    expect_usage_error([&] { partition(xy, 2, negative, 0); }, "negative weight");
    std::vector<double> nan = xy;
    if (first) nan[3] = std::numeric_limits<double>::quiet_NaN();
    expect_usage_error([&] { partition(nan, 2, {}, 0); }, "NaN coordinate");
    expect_usage_error([&] { partition(xy, 2, {}, -1); }, "negative parts");
    expect_usage_error([&] { partition(xy, 2, {}, static_cast<int>(per_node) * nodes() + 1); }, "more parts than elements");
    if (nodes() > 1) {
      expect_usage_error([&] { partition(xy, 2, first ? std::span<const double>() : std::span<const double>(w), 0); },
                         "weights on some nodes only");
    }
    // And the library is still in step afterwards.
    EXPECT_EQ(partition(xy, 2, {}, 0).owner.size(), static_cast<std::size_t>(per_node));
  }
}

TEST(PartitionErrors, GraphPartition) {
  const mesh m = grid_mesh({6, 4 * nodes(), 1}, 2, 33);
  const distribution d = block_distribution(m.size, nodes());
  const chaos::translation_table table(d.owned_by(me()), m.size);
  const local_graph g = graph_of(m, d.owned_by(me()));
  const bool first = me() == 0;
  auto offsets = [&](auto change) {
    std::vector<index> o = g.offsets;
    if (first) change(o);
    return o;
  };
  const std::vector<index> short_offsets = offsets([](std::vector<index>& o) { o.pop_back(); });
  const std::vector<index> decreasing = offsets([](std::vector<index>& o) { std::swap(o[1], o[2]); });
  const std::vector<index> not_from_zero = offsets([](std::vector<index>& o) { o[0] = 1; });
  std::vector<index> out_of_range = g.adjacency;
  if (first) out_of_range[0] = m.size;
  std::vector<index> negative_vertex = g.adjacency;
  if (first) negative_vertex.back() = -1;
  const std::vector<double> w(d.owned_by(me()).size() + (first ? 1 : 0), 1.0);

  expect_usage_error([&] { chaos::graph_partition(table, short_offsets, g.adjacency); }, "offsets too short");
  expect_usage_error([&] { chaos::graph_partition(table, decreasing, g.adjacency); }, "offsets decrease");
  expect_usage_error([&] { chaos::graph_partition(table, not_from_zero, g.adjacency); }, "offsets start at 1");
  expect_usage_error([&] { chaos::graph_partition(table, g.offsets, out_of_range); }, "vertex past the end");
  expect_usage_error([&] { chaos::graph_partition(table, g.offsets, negative_vertex); }, "negative vertex");
  expect_usage_error([&] { chaos::graph_partition(table, g.offsets, g.adjacency, w); }, "weights size");
  expect_usage_error([&] { chaos::graph_partition(table, g.offsets, g.adjacency, {}, -2); }, "negative parts");
  expect_usage_error([&] { chaos::graph_partition(table, g.offsets, g.adjacency, {}, static_cast<int>(m.size) + 1); },
                     "more parts than vertices");
  const partition_result still = chaos::graph_partition(table, g.offsets, g.adjacency);  // still in step
  EXPECT_TRUE(valid_partition(owners_by_global(d, still.owner), nodes(), still.quality));
}

TEST(PartitionErrors, CutEdgesAndIterations) {
  const index n = 10 * nodes();
  const distribution d = block_distribution(n, nodes());
  const chaos::translation_table table(d.owned_by(me()), n);
  const bool first = me() == 0;
  const std::vector<index> from{0, 1, 2}, to{n - 1, 3, first ? n : 4}, short_to{1, 2};
  expect_usage_error([&] { chaos::cut_edges(table, from, to); }, "edge end past the end");
  expect_usage_error([&] { chaos::cut_edges(table, from, first ? std::span<const index>(short_to) : std::span<const index>(from)); },
                     "edge lists of different sizes");
  EXPECT_EQ(chaos::cut_edges(table, from, from).cut, 0);

  // Not collective: each node checks its own.
  const std::vector<index> refs{0, 1, 2, 3};
  for (iteration_rule rule : {iteration_rule::owner_computes, iteration_rule::almost_owner_computes}) {
    expect_usage_error([&] { chaos::partition_iterations(table, std::vector<index>{0, 3, 2, 4}, refs, rule); }, "offsets decrease");
    expect_usage_error([&] { chaos::partition_iterations(table, std::vector<index>{0, 2, 5}, refs, rule); }, "offsets past refs");
    expect_usage_error([&] { chaos::partition_iterations(table, std::vector<index>{1, 2, 4}, refs, rule); }, "offsets from 1");
    expect_usage_error([&] { chaos::partition_iterations(table, std::vector<index>{0, 2, 4}, std::vector<index>{0, n, 1, 2}, rule); },
                       "reference past the end");
    expect_usage_error([&] { chaos::partition_iterations(table, std::vector<index>{0, 2, 4}, std::vector<index>{0, 1, -1, 2}, rule); },
                       "negative reference");
  }
  expect_usage_error([&] { chaos::partition_iterations(table, std::vector<index>{0, 2, 2, 4}, refs, iteration_rule::owner_computes); },
                     "owner_computes with an iteration referencing nothing");
  EXPECT_EQ(chaos::partition_iterations(table, std::vector<index>{0, 2, 2, 4}, refs, iteration_rule::almost_owner_computes).size(), 3u);
}

}  // namespace
