// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/unstructured/mesh_generator.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "squall/apps/counter_rng.hpp"

namespace squall::apps::unstructured {
namespace {

using Point = std::array<int, 3>;

// Cells and lattice points of a shape, and which of them the hole removes.
class Lattice {
 public:
  explicit Lattice(const MeshShape& shape) : shape_(shape) {
    for (int a = 0; a < 3; ++a) {
      if (shape.cells[a] < 1) throw std::invalid_argument("mesh: every side needs at least one cell");
      has_hole_ = has_hole_ && shape.hole[a] > 0;
      if (shape.hole[a] > 0 && shape.hole[a] > shape.cells[a] - 2) {
        throw std::invalid_argument("mesh: the hole must leave at least one cell on every side");
      }
      hole_start_[a] = (shape.cells[a] - shape.hole[a]) / 2;
    }
  }

  int points(int axis) const { return shape_.cells[axis] + 1; }
  std::size_t point_index(const Point& p) const {
    return (static_cast<std::size_t>(p[2]) * points(1) + p[1]) * points(0) + p[0];
  }
  std::size_t point_count() const {
    return static_cast<std::size_t>(points(0)) * points(1) * points(2);
  }

  bool cell_present(const Point& c) const {
    bool in_hole = has_hole_;
    for (int a = 0; a < 3; ++a) {
      if (c[a] < 0 || c[a] >= shape_.cells[a]) return false;
      in_hole = in_hole && c[a] >= hole_start_[a] && c[a] < hole_start_[a] + shape_.hole[a];
    }
    return !in_hole;
  }

  // A point strictly inside the hole belongs to no cell.
  bool point_present(const Point& p) const {
    bool inside_hole = has_hole_;
    for (int a = 0; a < 3; ++a) {
      inside_hole = inside_hole && p[a] > hole_start_[a] && p[a] < hole_start_[a] + shape_.hole[a];
    }
    return !inside_hole;
  }

 private:
  MeshShape shape_;
  bool has_hole_ = true;
  Point hole_start_{};
};

// The seven edge directions of the Kuhn split: every segment from a cell corner to a corner
// with no smaller coordinate (3 cell edges, 3 face diagonals, 1 main diagonal).
constexpr std::array<Point, 7> kEdgeDirections{
    {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}}};

// An edge from `p` along `d` exists if any cell containing both ends is present: the cells
// with origin p - s, where s is 0 or 1 along each axis where d is 0.
bool edge_present(const Lattice& lattice, const Point& p, const Point& d) {
  for (int s = 0; s < 8; ++s) {
    Point origin = p;
    bool valid = true;
    for (int a = 0; a < 3; ++a) {
      const int shift = (s >> a) & 1;
      if (shift && d[a]) valid = false;
      origin[a] -= shift;
    }
    if (valid && lattice.cell_present(origin)) return true;
  }
  return false;
}

std::vector<std::uint32_t> random_permutation(std::size_t size, std::uint64_t seed, std::uint32_t what) {
  std::vector<std::uint32_t> permutation(size);
  std::iota(permutation.begin(), permutation.end(), 0u);
  for (std::size_t i = size; i-- > 1;) {
    KeyedRandom random(seed, Stream::kMeshShuffle, i, what);
    std::swap(permutation[i], permutation[random.below(static_cast<std::uint32_t>(i + 1))]);
  }
  return permutation;
}

template <typename T>
std::vector<T> shuffled(const std::vector<T>& items, std::uint64_t seed, std::uint32_t what) {
  const auto position = random_permutation(items.size(), seed, what);
  std::vector<T> result(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) result[position[i]] = items[i];
  return result;
}

Point plus(Point p, const Point& d) {
  for (int a = 0; a < 3; ++a) p[a] += d[a];
  return p;
}

}  // namespace

MeshCounts expected_counts(const MeshShape& shape) {
  const auto [cx, cy, cz] = shape.cells;
  const std::size_t x = cx, y = cy, z = cz;
  MeshCounts counts{};
  counts.nodes = (x + 1) * (y + 1) * (z + 1);
  counts.edges = x * (y + 1) * (z + 1) + y * (x + 1) * (z + 1) + z * (x + 1) * (y + 1)  // cell edges
                 + x * y * (z + 1) + y * z * (x + 1) + x * z * (y + 1)                // face diagonals
                 + x * y * z;                                                          // main diagonals
  counts.faces = 4 * (x * y + y * z + x * z);
  const auto [hx_, hy_, hz_] = shape.hole;
  if (hx_ > 0 && hy_ > 0 && hz_ > 0) {
    const std::size_t hx = hx_, hy = hy_, hz = hz_;
    counts.nodes -= (hx - 1) * (hy - 1) * (hz - 1);
    counts.edges -= hx * (hy - 1) * (hz - 1) + hy * (hx - 1) * (hz - 1) + hz * (hx - 1) * (hy - 1) +
                    hx * hy * (hz - 1) + hy * hz * (hx - 1) + hx * hz * (hy - 1) + hx * hy * hz;
    counts.faces += 4 * (hx * hy + hy * hz + hx * hz);
  }
  return counts;
}

MeshShape shape_for_nodes(std::size_t target_nodes) {
  MeshShape best{{1, 1, 1}, {0, 0, 0}};
  std::size_t best_error = SIZE_MAX;
  for (int step = 1; step <= 6000; ++step) {
    const double scale = 0.0005 * step;
    MeshShape shape{};
    bool hole_fits = true;
    for (int a = 0; a < 3; ++a) {
      shape.cells[a] = std::max(1, static_cast<int>(std::lround(kPaperShape.cells[a] * scale)));
      shape.hole[a] = static_cast<int>(std::lround(kPaperShape.hole[a] * scale));
      hole_fits = hole_fits && shape.hole[a] >= 1 && shape.hole[a] <= shape.cells[a] - 2;
    }
    if (!hole_fits) shape.hole = {0, 0, 0};
    const std::size_t nodes = expected_counts(shape).nodes;
    const std::size_t error = nodes > target_nodes ? nodes - target_nodes : target_nodes - nodes;
    if (error < best_error) {
      best = shape;
      best_error = error;
    }
  }
  return best;
}

Mesh generate_mesh(const MeshShape& shape, std::uint64_t seed) {
  const Lattice lattice(shape);

  // Number the present lattice points in lattice order, then rename them at random.
  std::vector<std::uint32_t> structured(lattice.point_count(), UINT32_MAX);
  std::vector<Point> points;
  for (int z = 0; z < lattice.points(2); ++z) {
    for (int y = 0; y < lattice.points(1); ++y) {
      for (int x = 0; x < lattice.points(0); ++x) {
        if (!lattice.point_present({x, y, z})) continue;
        structured[lattice.point_index({x, y, z})] = static_cast<std::uint32_t>(points.size());
        points.push_back({x, y, z});
      }
    }
  }
  const auto name = random_permutation(points.size(), seed, 0);
  auto name_of = [&](const Point& p) { return name[structured[lattice.point_index(p)]]; };

  Mesh mesh;
  mesh.coords.resize(points.size());
  for (std::size_t s = 0; s < points.size(); ++s) {
    // Up to 15% of a cell each way: irregular geometry, tetrahedra still valid.
    KeyedRandom random(seed, Stream::kMeshJitter, s);
    Vec3& at = mesh.coords[name[s]];
    at.x = points[s][0] + 0.3 * (random.uniform() - 0.5);
    at.y = points[s][1] + 0.3 * (random.uniform() - 0.5);
    at.z = points[s][2] + 0.3 * (random.uniform() - 0.5);
  }

  std::vector<Edge> edges;
  for (const Point& p : points) {
    for (const Point& d : kEdgeDirections) {
      if (edge_present(lattice, p, d)) edges.push_back({name_of(p), name_of(plus(p, d))});
    }
  }

  // Each boundary square (a present cell's side with no present cell beyond it) is split
  // along its face diagonal into two triangles.
  std::vector<Face> faces;
  for (int z = 0; z < shape.cells[2]; ++z) {
    for (int y = 0; y < shape.cells[1]; ++y) {
      for (int x = 0; x < shape.cells[0]; ++x) {
        const Point cell{x, y, z};
        if (!lattice.cell_present(cell)) continue;
        for (int axis = 0; axis < 3; ++axis) {
          for (int side : {-1, 1}) {
            Point beyond = cell;
            beyond[axis] += side;
            if (lattice.cell_present(beyond)) continue;
            Point corner = cell;
            if (side > 0) corner[axis] += 1;
            Point u{}, v{};
            u[(axis + 1) % 3] = 1;
            v[(axis + 2) % 3] = 1;
            const NodeId origin = name_of(corner), far = name_of(plus(plus(corner, u), v));
            faces.push_back({{origin, name_of(plus(corner, u)), far}});
            faces.push_back({{origin, name_of(plus(corner, v)), far}});
          }
        }
      }
    }
  }
  mesh.edges = shuffled(edges, seed, 1);
  mesh.faces = shuffled(faces, seed, 2);
  return mesh;
}

}  // namespace squall::apps::unstructured
