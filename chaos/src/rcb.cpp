// SPDX-License-Identifier: BSD-3-Clause
// Recursive coordinate bisection: each group is cut across the longest side of its bounding box.
#include <limits>

#include "partition_support.hpp"

namespace squall::chaos {
namespace {

// The coordinate along the group's longest extent (the lowest axis among equally long ones).
void longest_axis_key(const detail::gathered_points& points, std::span<const index> group, std::span<double> key) {
  const int dim = points.dim;
  double lo[3], hi[3];
  for (int a = 0; a < dim; ++a) {
    lo[a] = std::numeric_limits<double>::infinity();
    hi[a] = -std::numeric_limits<double>::infinity();
  }
  for (const index e : group) {
    const double* x = &points.coords[static_cast<std::size_t>(e * dim)];
    for (int a = 0; a < dim; ++a) {
      if (x[a] < lo[a]) lo[a] = x[a];
      if (x[a] > hi[a]) hi[a] = x[a];
    }
  }
  int axis = 0;
  for (int a = 1; a < dim; ++a) {
    if (hi[a] - lo[a] > hi[axis] - lo[axis]) axis = a;
  }
  for (std::size_t i = 0; i < group.size(); ++i) key[i] = points.coords[static_cast<std::size_t>(group[i] * dim + axis)];
}

}  // namespace

partition_result rcb(std::span<const double> coords, int dim, std::span<const double> weights, int parts) {
  return detail::geometric_partition("chaos::rcb", coords, dim, weights, parts, longest_axis_key);
}

}  // namespace squall::chaos
