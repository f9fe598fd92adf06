// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The static Cartesian grid of cells. Lengths are in cell widths: cell (x, y, z) is the unit
// cube at that corner, and cells are numbered x fastest.
#include <array>
#include <cmath>
#include <cstdint>

#include "squall/apps/vec3.hpp"

namespace squall::apps::dsmc {

using CellId = std::uint32_t;
inline constexpr std::int64_t kOutside = -1;

struct Grid {
  std::array<int, 3> cells;

  std::size_t cell_count() const {
    return static_cast<std::size_t>(cells[0]) * cells[1] * cells[2];
  }
  CellId cell_id(int x, int y, int z) const {
    return static_cast<CellId>((static_cast<std::size_t>(z) * cells[1] + y) * cells[0] + x);
  }
  std::array<int, 3> coordinates(CellId cell) const {
    return {static_cast<int>(cell % cells[0]), static_cast<int>(cell / cells[0] % cells[1]),
            static_cast<int>(cell / cells[0] / cells[1])};
  }
  // The cell holding `p`, or kOutside when p is outside the box.
  std::int64_t cell_of(const Vec3& p) const {
    const double at[3] = {std::floor(p.x), std::floor(p.y), std::floor(p.z)};
    for (int a = 0; a < 3; ++a) {
      if (!(at[a] >= 0 && at[a] < cells[a])) return kOutside;
    }
    return cell_id(static_cast<int>(at[0]), static_cast<int>(at[1]), static_cast<int>(at[2]));
  }
};

}  // namespace squall::apps::dsmc
