// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/dsmc/parallel/block_partition.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "squall/apps/options.hpp"

namespace squall::apps::dsmc {
namespace {

// The block of `n` items in `parts` blocks that item i falls in (block b starts at b*n/parts).
int block_of(int i, int n, int parts) { return static_cast<int>(((i + 1) * std::int64_t{parts} - 1) / n); }

}  // namespace

BlockPartition::BlockPartition(const Grid& grid, int nodes) : grid_(grid) {
  if (nodes < 1) throw std::invalid_argument("dsmc partition: at least one node is needed");
  for (int p = std::min(nodes, grid.cells[0]); p >= 1; --p) {
    if (nodes % p == 0) {
      px_ = p;
      break;
    }
  }
  py_ = nodes / px_;
  // The grid comes from --cells and the node count from the job: refused as a bad command line
  // (status 2, said once for the job), as unstructured refuses a mesh too small for the job.
  if (py_ > grid.cells[1]) {
    throw OptionError("--cells " + std::to_string(grid.cells[0]) + " " + std::to_string(grid.cells[1]) + " " +
                      std::to_string(grid.cells[2]) + ": the job's " + std::to_string(nodes) +
                      " nodes (or MPI processes) cannot each have cells of the " + std::to_string(grid.cells[0]) + "x" +
                      std::to_string(grid.cells[1]) +
                      " face (blocks along x, then y): give more cells along x and y, or run on fewer nodes");
  }
}

BlockPartition::Range BlockPartition::x_range(int ix) const {
  return {static_cast<int>(std::int64_t{ix} * grid_.cells[0] / px_),
          static_cast<int>(std::int64_t{ix + 1} * grid_.cells[0] / px_)};
}

BlockPartition::Range BlockPartition::y_range(int iy) const {
  return {static_cast<int>(std::int64_t{iy} * grid_.cells[1] / py_),
          static_cast<int>(std::int64_t{iy + 1} * grid_.cells[1] / py_)};
}

int BlockPartition::owner(CellId cell) const {
  const auto c = grid_.coordinates(cell);
  return block_of(c[1], grid_.cells[1], py_) * px_ + block_of(c[0], grid_.cells[0], px_);
}

std::size_t BlockPartition::local_cell_count(int node) const {
  const Range x = x_range(node % px_), y = y_range(node / px_);
  return static_cast<std::size_t>(x.end - x.begin) * static_cast<std::size_t>(y.end - y.begin) *
         static_cast<std::size_t>(grid_.cells[2]);
}

std::size_t BlockPartition::local_index(int node, CellId cell) const {
  const Range x = x_range(node % px_), y = y_range(node / px_);
  const auto c = grid_.coordinates(cell);
  const auto width = static_cast<std::size_t>(x.end - x.begin), depth = static_cast<std::size_t>(y.end - y.begin);
  return (static_cast<std::size_t>(c[2]) * depth + static_cast<std::size_t>(c[1] - y.begin)) * width +
         static_cast<std::size_t>(c[0] - x.begin);
}

CellId BlockPartition::global_cell(int node, std::size_t local) const {
  const Range x = x_range(node % px_), y = y_range(node / px_);
  const auto width = static_cast<std::size_t>(x.end - x.begin), depth = static_cast<std::size_t>(y.end - y.begin);
  return grid_.cell_id(x.begin + static_cast<int>(local % width), y.begin + static_cast<int>(local / width % depth),
                       static_cast<int>(local / width / depth));
}

int BlockPartition::neighbour(int node, int direction) const {
  int ix = node % px_, iy = node / px_;
  (direction < 2 ? ix : iy) += direction % 2 ? 1 : -1;
  if (ix < 0 || ix >= px_ || iy < 0 || iy >= py_) return -1;
  return iy * px_ + ix;
}

int BlockPartition::direction_to(int node, int other) const {
  for (int d = 0; d < kDirections; ++d) {
    if (neighbour(node, d) == other) return d;
  }
  return -1;
}

std::vector<InflowSource> BlockPartition::sources_of(int node, std::span<const InflowSource> all) const {
  std::vector<InflowSource> mine;
  for (const InflowSource& s : all) {
    std::array<int, 3> face_cell{};
    for (int a = 0; a < 3; ++a) face_cell[a] = std::clamp(s.corner[a], 0, grid_.cells[a] - 1);
    if (owner(grid_.cell_id(face_cell[0], face_cell[1], face_cell[2])) == node) mine.push_back(s);
  }
  return mine;
}

std::size_t BlockPartition::largest_side_cells() const {
  const auto z = static_cast<std::size_t>(grid_.cells[2]);
  const auto widest_x = static_cast<std::size_t>(x_range(px_ - 1).end - x_range(px_ - 1).begin + 1);
  const auto widest_y = static_cast<std::size_t>(y_range(py_ - 1).end - y_range(py_ - 1).begin + 1);
  return z * std::max(widest_x, widest_y);
}

}  // namespace squall::apps::dsmc
