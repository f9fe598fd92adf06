// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The paper's partition of DSMC's cells (section 5.3.1): blocks of whole cells, cut along x
// first because most moves are along x. The nodes form a px x py grid of blocks, px the
// largest divisor of the node count that is at most the cells along x (so up to that many
// nodes the blocks are slabs of x), each block spanning every z. A node's neighbours are the
// blocks across its four sides (-x, +x, -y, +y); a move to any other node is a far move.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "squall/apps/dsmc/grid.hpp"
#include "squall/apps/dsmc/inflow.hpp"

namespace squall::apps::dsmc {

inline constexpr int kDirections = 4;  // -x, +x, -y, +y
inline constexpr int opposite(int direction) { return direction ^ 1; }

class BlockPartition {
 public:
  // std::invalid_argument when the grid cannot give every node at least one cell.
  BlockPartition(const Grid& grid, int nodes);

  int nodes() const { return px_ * py_; }
  int owner(CellId cell) const;
  // The node's cells, numbered locally x fastest, and back to the global numbering.
  std::size_t local_cell_count(int node) const;
  std::size_t local_index(int node, CellId cell) const;  // the cell must be the node's
  CellId global_cell(int node, std::size_t local) const;
  int neighbour(int node, int direction) const;  // -1 at the box's side
  int direction_to(int node, int other) const;   // the side `other` lies across, or -1 (far)
  // The sources a node generates inflow for: those whose face cell is the node's.
  std::vector<InflowSource> sources_of(int node, std::span<const InflowSource> all) const;
  // The most cells on one side of any block (sizes the receive buffers).
  std::size_t largest_side_cells() const;

 private:
  struct Range {
    int begin, end;
  };
  Range x_range(int ix) const;
  Range y_range(int iy) const;

  Grid grid_;
  int px_ = 1, py_ = 1;
};

}  // namespace squall::apps::dsmc
