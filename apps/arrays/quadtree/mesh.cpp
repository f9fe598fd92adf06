// SPDX-License-Identifier: BSD-3-Clause
#include "mesh.hpp"

#include <squall/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <string>

#include "squall/apps/checksum.hpp"

namespace squall::apps::quadtree {

bool path_less::operator()(const path& a, const path& b) const {
  if (a.bits != b.bits) return a.bits < b.bits;
  return a.words < b.words;
}

Tile tile_of(const path& p) {
  if (p.bits % 2 != 0) throw squall::usage_error("quadtree: a path of " + std::to_string(p.bits) + " bits (two a level)");
  Tile t;
  t.level = static_cast<int>(p.depth(2));
  for (int l = 0; l < t.level; ++l) {
    const unsigned v = p.step(static_cast<std::uint32_t>(l), 2);
    t.x = 2 * t.x + (v & 1);
    t.y = 2 * t.y + (v >> 1);
  }
  return t;
}

path path_of(const Tile& t) {
  path p;
  for (int l = t.level - 1; l >= 0; --l) {
    const unsigned v = static_cast<unsigned>((((t.y >> l) & 1) << 1) | ((t.x >> l) & 1));
    p = p.child(v, 2);
  }
  return p;
}

std::int64_t along(const Tile& t, int s) { return s == west || s == east ? t.y : t.x; }

namespace {

constexpr std::array<int, 4> dx{-1, 1, 0, 0}, dy{0, 0, -1, 1};

Tile child_tile(const Tile& t, int qx, int qy) { return {t.level + 1, 2 * t.x + qx, 2 * t.y + qy}; }

// The leaves inside q that touch q's side `face`, in increasing position along it.
void descend(const Tile& q, int face, const Leaves& leaves, int max_level, std::vector<Tile>& out) {
  if (q.level >= max_level) throw squall::usage_error("quadtree: the leaves do not cover the square");
  for (int k = 0; k < 2; ++k) {
    const Tile c = face == west || face == east ? child_tile(q, face == east ? 1 : 0, k)
                                                : child_tile(q, k, face == north ? 1 : 0);
    if (leaves.count(path_of(c)) != 0)
      out.push_back(c);
    else
      descend(c, face, leaves, max_level, out);
  }
}

}  // namespace

std::vector<Tile> neighbours(const Tile& t, int s, const Leaves& leaves, int max_level) {
  const std::int64_t n = std::int64_t{1} << t.level;
  const Tile q{t.level, t.x + dx[static_cast<std::size_t>(s)], t.y + dy[static_cast<std::size_t>(s)]};
  if (q.x < 0 || q.y < 0 || q.x >= n || q.y >= n) return {};
  for (Tile a = q;; a = Tile{a.level - 1, a.x >> 1, a.y >> 1}) {  // the same level, or coarser
    if (leaves.count(path_of(a)) != 0) return {a};
    if (a.level == 0) break;
  }
  std::vector<Tile> out;  // finer: the leaves inside q along the face it shares with t
  descend(q, opposite(s), leaves, max_level, out);
  return out;
}

std::vector<double> edge_values(const std::vector<double>& u, int b, int s) {
  std::vector<double> e(static_cast<std::size_t>(b));
  for (int k = 0; k < b; ++k) {
    const int i = s == west ? 0 : s == east ? b - 1 : k;
    const int j = s == south ? 0 : s == north ? b - 1 : k;
    e[static_cast<std::size_t>(k)] = u[static_cast<std::size_t>(j) * b + i];
  }
  return e;
}

void sort_edges(Ghosts& g) {
  for (auto& side_edges : g) {
    // By where each starts along the face (along / 2^level, scaled to an integer): distinct
    // neighbours on one face cover disjoint ranges, so their starts differ.
    std::sort(side_edges.begin(), side_edges.end(), [](const Edge& a, const Edge& b) {
      return a.along << (kMaxLevel - a.level) < b.along << (kMaxLevel - b.level);
    });
  }
}

std::vector<double> advance(const Tile& t, const std::vector<double>& u, const Ghosts& g, int k, const Params& p) {
  const int b = p.block;
  const auto at = [b](int i, int j) { return static_cast<std::size_t>(j) * b + i; };
  const std::int64_t s_me = std::int64_t{1} << (p.max_level - t.level);

  // Each boundary cell's exchange with the leaves across each face.
  std::array<std::vector<double>, 4> flux;
  for (int s = 0; s < 4; ++s) {
    std::vector<double>& f = flux[static_cast<std::size_t>(s)];
    f.assign(static_cast<std::size_t>(b), 0.0);
    const std::vector<Edge>& edges = g[static_cast<std::size_t>(s)];
    if (edges.empty()) continue;  // the domain's edge: insulated
    const std::vector<double> mine = edge_values(u, b, s);
    const std::int64_t base = along(t, s) * b;
    for (int m = 0; m < b; ++m) {
      const std::int64_t lo = (base + m) * s_me, hi = lo + s_me;
      double acc = 0.0;
      for (const Edge& e : edges) {
        const std::int64_t s_n = std::int64_t{1} << (p.max_level - e.level);
        const std::int64_t nbase = e.along * b;
        for (int q = 0; q < b; ++q) {
          const std::int64_t nlo = (nbase + q) * s_n, nhi = nlo + s_n;
          const std::int64_t o = std::min(hi, nhi) - std::max(lo, nlo);
          if (o <= 0) continue;
          const double w = 2.0 * static_cast<double>(o) / static_cast<double>(s_me + s_n);
          acc += (e.values[static_cast<std::size_t>(q)] - mine[static_cast<std::size_t>(m)]) * w;
        }
      }
      f[static_cast<std::size_t>(m)] = acc;
    }
  }

  const double c = p.cfl * std::ldexp(1.0, -2 * (p.max_level - t.level));  // dt / h^2
  const double h = 1.0 / (static_cast<double>(b) * std::ldexp(1.0, t.level));
  const Torch torch = torch_at(k, p);
  std::vector<double> out(u.size());
  for (int j = 0; j < b; ++j) {
    for (int i = 0; i < b; ++i) {
      const double v = u[at(i, j)];
      const auto su = static_cast<std::size_t>(i), sv = static_cast<std::size_t>(j);
      const double w = i > 0 ? u[at(i - 1, j)] - v : flux[west][sv];
      const double e = i < b - 1 ? u[at(i + 1, j)] - v : flux[east][sv];
      const double s = j > 0 ? u[at(i, j - 1)] - v : flux[south][su];
      const double n = j < b - 1 ? u[at(i, j + 1)] - v : flux[north][su];
      const double x = (static_cast<double>(t.x * b + i) + 0.5) * h;
      const double y = (static_cast<double>(t.y * b + j) + 0.5) * h;
      out[at(i, j)] = v + c * ((w + e) + (s + n)) - p.cooling * v + source_value(x, y, torch);
    }
  }
  return out;
}

double initial_value(double x, double y) {
  const double dx0 = x - 0.3, dy0 = y - 0.65;
  return std::exp(-(dx0 * dx0 + dy0 * dy0) / (2 * 0.06 * 0.06));
}

Torch torch_at(int k, const Params& p) {
  // Once round a circle of radius 0.25 over the run.
  const double angle = 2 * std::numbers::pi * k / p.steps;
  return {0.5 + 0.25 * std::cos(angle), 0.5 + 0.25 * std::sin(angle)};
}

double source_value(double x, double y, const Torch& torch) {
  constexpr double sigma = 0.03, strength = 0.05;
  const double r2 = (x - torch.x) * (x - torch.x) + (y - torch.y) * (y - torch.y);
  if (r2 > 36 * sigma * sigma) return 0.0;
  return strength * std::exp(-r2 / (2 * sigma * sigma));
}

std::vector<double> initial_block(const Tile& t, const Params& p) {
  const int b = p.block;
  const double h = 1.0 / (static_cast<double>(b) * std::ldexp(1.0, t.level));
  std::vector<double> u(static_cast<std::size_t>(b) * b);
  for (int j = 0; j < b; ++j)
    for (int i = 0; i < b; ++i)
      u[static_cast<std::size_t>(j) * b + i] = initial_value((static_cast<double>(t.x * b + i) + 0.5) * h,
                                                              (static_cast<double>(t.y * b + j) + 0.5) * h);
  return u;
}

Mark mark_of(const path& leaf, const std::vector<double>& u) {
  const auto [lo, hi] = std::minmax_element(u.begin(), u.end());
  return {leaf, *lo, *hi};
}

Plan plan_adapt(const Leaves& leaves, std::vector<Mark> marks, const Params& p) {
  std::sort(marks.begin(), marks.end(), [](const Mark& a, const Mark& b) { return path_less{}(a.leaf, b.leaf); });
  bool same = marks.size() == leaves.size();
  auto it = leaves.begin();
  for (std::size_t k = 0; same && k < marks.size(); ++k, ++it) same = marks[k].leaf == *it;
  if (!same) {
    throw squall::usage_error("quadtree: " + std::to_string(marks.size()) + " marks for " +
                              std::to_string(leaves.size()) + " leaves, not one each");
  }

  Plan plan;
  std::map<path, std::vector<const Mark*>, path_less> siblings;
  for (const Mark& m : marks) {
    const int level = static_cast<int>(m.leaf.depth(2));
    if (m.hi - m.lo > p.refine_above && level < p.max_level) plan.refine.insert(m.leaf);
    if (level > p.min_level) siblings[m.leaf.parent(2)].push_back(&m);
  }
  for (const auto& [parent, group] : siblings) {
    if (group.size() != 4) continue;  // some of its children are not leaves
    double lo = group[0]->lo, hi = group[0]->hi;
    bool any_refines = false;
    for (const Mark* m : group) {
      lo = std::min(lo, m->lo);
      hi = std::max(hi, m->hi);
      any_refines = any_refines || plan.refine.count(m->leaf) != 0;
    }
    if (!any_refines && hi - lo < p.coarsen_below) plan.coarsen.insert(parent);
  }

  plan.next = leaves;
  for (const path& leaf : plan.refine) {
    plan.next.erase(leaf);
    for (unsigned q = 0; q < 4; ++q) plan.next.insert(leaf.child(q, 2));
  }
  for (const path& parent : plan.coarsen) {
    for (unsigned q = 0; q < 4; ++q) plan.next.erase(parent.child(q, 2));
    plan.next.insert(parent);
  }
  return plan;
}

std::vector<double> child_block(const std::vector<double>& u, int b, int q) {
  const int qx = q & 1, qy = q >> 1;
  std::vector<double> c(static_cast<std::size_t>(b) * b);
  for (int j = 0; j < b; ++j)
    for (int i = 0; i < b; ++i)
      c[static_cast<std::size_t>(j) * b + i] = u[static_cast<std::size_t>((qy * b + j) / 2) * b + (qx * b + i) / 2];
  return c;
}

std::vector<double> parent_block(const std::array<std::vector<double>, 4>& children, int b) {
  const int half = b / 2;
  std::vector<double> u(static_cast<std::size_t>(b) * b);
  for (int j = 0; j < b; ++j) {
    for (int i = 0; i < b; ++i) {
      const std::vector<double>& c = children[static_cast<std::size_t>(2 * (j / half) + i / half)];
      const std::size_t ci = static_cast<std::size_t>(2 * (i % half)), cj = static_cast<std::size_t>(2 * (j % half));
      const std::size_t row0 = cj * b, row1 = (cj + 1) * b;
      u[static_cast<std::size_t>(j) * b + i] = 0.25 * ((c[row0 + ci] + c[row0 + ci + 1]) + (c[row1 + ci] + c[row1 + ci + 1]));
    }
  }
  return u;
}

bool adapts_at(int k, const Params& p) { return k < p.steps && k % p.adapt_every == 0; }

Field solve_sequential(const Params& p, std::vector<AdaptRecord>& history) {
  Field f;
  const std::int64_t n = std::int64_t{1} << p.min_level;
  for (std::int64_t y = 0; y < n; ++y)
    for (std::int64_t x = 0; x < n; ++x) {
      const Tile t{p.min_level, x, y};
      f[path_of(t)] = initial_block(t, p);
    }
  Leaves leaves;
  for (const auto& [leaf, u] : f) leaves.insert(leaf);

  history.clear();
  for (int k = 0; k < p.steps; ++k) {
    if (adapts_at(k, p)) {
      std::vector<Mark> marks;
      for (const auto& [leaf, u] : f) marks.push_back(mark_of(leaf, u));
      const Plan plan = plan_adapt(leaves, std::move(marks), p);
      for (const path& leaf : plan.refine) {
        const std::vector<double> u = std::move(f.at(leaf));
        f.erase(leaf);
        for (int q = 0; q < 4; ++q) f[leaf.child(static_cast<unsigned>(q), 2)] = child_block(u, p.block, q);
      }
      for (const path& parent : plan.coarsen) {
        std::array<std::vector<double>, 4> children;
        for (unsigned q = 0; q < 4; ++q) {
          children[q] = std::move(f.at(parent.child(q, 2)));
          f.erase(parent.child(q, 2));
        }
        f[parent] = parent_block(children, p.block);
      }
      leaves = plan.next;
      history.push_back({k, plan.refine.size(), plan.coarsen.size(), leaves.size()});
    }
    Field next;
    for (const auto& [leaf, u] : f) {
      const Tile t = tile_of(leaf);
      Ghosts g;
      for (int s = 0; s < 4; ++s) {
        for (const Tile& nb : neighbours(t, s, leaves, p.max_level)) {
          g[static_cast<std::size_t>(s)].push_back(
              Edge{nb.level, along(nb, s), edge_values(f.at(path_of(nb)), p.block, opposite(s))});
        }
      }
      sort_edges(g);
      next[leaf] = advance(t, u, g, k, p);
    }
    f.swap(next);
  }
  return f;
}

std::uint64_t field_checksum(const Field& f) {
  Checksum sum;
  for (const auto& [leaf, u] : f) {
    sum.add(leaf.bits);
    for (const std::uint64_t w : leaf.words) sum.add(w);
    for (const double v : u) {
      std::uint64_t bits = 0;
      std::memcpy(&bits, &v, sizeof bits);
      sum.add(bits);
    }
  }
  return sum.value();
}

double field_heat(const Field& f, int b) {
  double heat = 0;
  for (const auto& [leaf, u] : f) {
    const double h = 1.0 / (static_cast<double>(b) * std::ldexp(1.0, static_cast<int>(leaf.depth(2))));
    for (const double v : u) heat += v * h * h;
  }
  return heat;
}

}  // namespace squall::apps::quadtree
