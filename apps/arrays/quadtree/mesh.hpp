// SPDX-License-Identifier: BSD-3-Clause
// The adaptive quadtree heat-flow problem both versions solve, and every piece of arithmetic
// they share: u_t = Laplace(u) - c u + q on the unit square, insulated edges, on a quadtree
// of leaves of b x b cells, explicit finite volumes. q is a torch circling the square once
// over the run; -c u is the plate cooling in the air, so the torch's trail fades and the mesh
// coarsens behind it.
//
// A leaf is named by its path from the root, two bits a level (bit_index): the level's value
// is 2*qy + qx, qx = 1 for the east half, qy = 1 for the north half. Its tile (level, x, y)
// is the same path read as coordinates.
//
// The scheme (conservative across levels). Positions are integers in units of a cell of the
// finest level; a level-L cell is s_L = 2^(max_level - L) units wide. Two cells that share a
// piece of a face of o units exchange (u_b - u_a) * w, w = 2o / (s_a + s_b) (the face length
// over the distance between the centres), so what one gains the other loses: the same w on
// both sides, whatever their levels, with no limit on the level difference. A cell updates as
//   u' = u + (dt / h^2) * ((west + east) + (south + north)) - cooling * u + q
// where each term is the sum of the (u_b - u_a) * w across that face, in increasing position
// along it. Neighbours at the same level give w = 1: a uniform mesh is the 5-point Laplacian.
// Refinement injects (the 4 cells of a child that cover a parent cell take its value) and
// coarsening averages 4 cells, 0.25 * ((a + b) + (c + d)): heat is conserved by both.
//
// The arrays version and the sequential version call these same functions with the same
// inputs in the same order, so their fields are bitwise equal (built with -ffp-contract=off).
#pragma once
#include <squall/arrays/index.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

namespace squall::apps::quadtree {

using path = squall::arrays::bit_index;

// Orders paths by level, then by their bits (std::map and std::set keys).
struct path_less {
  bool operator()(const path& a, const path& b) const;
};
using Leaves = std::set<path, path_less>;

constexpr int kMaxLevel = 30;  // the deepest a leaf may be (positions fit in 64 bits)

struct Params {
  int block = 8;  // cells per leaf side (even)
  int min_level = 2, max_level = 5;
  int steps = 200, adapt_every = 10;
  double cfl = 0.2;            // dt = cfl * h^2 at the finest level (stable up to 0.25)
  double cooling = 0.05;       // the fraction of its heat a cell loses to the air each step
  double refine_above = 0.04;  // refine a leaf whose max - min is above this
  double coarsen_below = 0.01; // coarsen 4 sibling leaves whose joint max - min is below this
};

enum side : int { west = 0, east = 1, south = 2, north = 3 };
constexpr int opposite(int s) { return s ^ 1; }

struct Tile {
  int level = 0;
  std::int64_t x = 0, y = 0;
  friend bool operator==(const Tile&, const Tile&) = default;
};
Tile tile_of(const path& p);
path path_of(const Tile& t);

// One neighbour leaf's side of a face, as it sends it: its level, its tile coordinate along
// the face (x for south/north faces, y for west/east ones), and its b edge cells in that order.
struct Edge {
  std::int32_t level = 0;
  std::int64_t along = 0;
  std::vector<double> values;
  template <class A>
  void serialize(A& ar) {
    ar(level, along, values);
  }
};
using Ghosts = std::array<std::vector<Edge>, 4>;  // by side

// The leaves across side s of t, in increasing position along the face (empty at the domain's
// edge): one at the same or a coarser level, or every finer leaf touching the face.
std::vector<Tile> neighbours(const Tile& t, int s, const Leaves& leaves, int max_level);
std::int64_t along(const Tile& t, int s);  // t's coordinate along a face on side s
// A block's b cells on side s, in increasing position along it (cells are row-major: u[j*b + i],
// i eastward, j northward).
std::vector<double> edge_values(const std::vector<double>& u, int b, int s);

// Step k -> k + 1 of leaf t, with the edges of step k from its neighbours (each side sorted by
// position along it: sort_edges).
void sort_edges(Ghosts& g);
std::vector<double> advance(const Tile& t, const std::vector<double>& u, const Ghosts& g, int k, const Params& p);

// The field before step 0; where the torch is during step k, and what it adds to a point.
double initial_value(double x, double y);
struct Torch {
  double x = 0, y = 0;
};
Torch torch_at(int k, const Params& p);
double source_value(double x, double y, const Torch& torch);
std::vector<double> initial_block(const Tile& t, const Params& p);

// Adaptation. Each leaf reports its path and the range of its cells; the plan is a pure
// function of the leaves and the reports, computed the same on every node.
struct Mark {
  path leaf;
  double lo = 0, hi = 0;
  template <class A>
  void serialize(A& ar) {
    ar(leaf, lo, hi);
  }
};
Mark mark_of(const path& leaf, const std::vector<double>& u);
struct Plan {
  Leaves refine;   // leaves that become their 4 children
  Leaves coarsen;  // parents whose 4 leaf children become them
  Leaves next;     // the leaves afterwards
};
// `marks` in any order (sorted here); throws squall::usage_error unless they name `leaves` exactly.
Plan plan_adapt(const Leaves& leaves, std::vector<Mark> marks, const Params& p);
// The data of child q (0..3: 2*qy + qx) of a leaf, by injection; a parent's from its 4 children.
std::vector<double> child_block(const std::vector<double>& u, int b, int q);
std::vector<double> parent_block(const std::array<std::vector<double>, 4>& children, int b);

// What each adaptation did (both versions record it).
struct AdaptRecord {
  int step = 0;
  std::size_t refined = 0, coarsened = 0, leaves = 0;
  friend bool operator==(const AdaptRecord&, const AdaptRecord&) = default;
};
// Adapt at steps 0, adapt_every, 2 adapt_every, ... (before that step), then step to `steps`.
bool adapts_at(int k, const Params& p);

using Field = std::map<path, std::vector<double>, path_less>;
// The sequential version: the same algorithm on a std::map.
Field solve_sequential(const Params& p, std::vector<AdaptRecord>& history);

// FNV-1a of the leaves' paths and their cells' bit patterns, in path_less order; and the
// total heat (sum of u h^2), in the same order.
std::uint64_t field_checksum(const Field& f);
double field_heat(const Field& f, int b);

}  // namespace squall::apps::quadtree
