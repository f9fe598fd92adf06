// SPDX-License-Identifier: BSD-3-Clause
// Recursive inertial bisection: each group is cut across the principal axis of its inertia
// (the direction in which its points, weighted, spread the most).
#include <utility>
#include <vector>

#include "partition_support.hpp"

namespace squall::chaos {
namespace {

// The position along the group's principal axis, measured from its centre of mass. Masses are
// the weights when they are given and not all zero, else 1.
void inertial_axis_key(const detail::gathered_points& points, std::span<const index> group, std::span<double> key) {
  const int dim = points.dim;
  auto x = [&](index e) { return &points.coords[static_cast<std::size_t>(e * dim)]; };
  bool weighted = false;
  for (const index e : group) weighted = weighted || (!points.weights.empty() && points.weights[static_cast<std::size_t>(e)] > 0);
  auto mass = [&](index e) { return weighted ? points.weights[static_cast<std::size_t>(e)] : 1.0; };

  double total = 0, centre[3] = {0, 0, 0};
  for (const index e : group) {
    total += mass(e);
    for (int a = 0; a < dim; ++a) centre[a] += mass(e) * x(e)[a];
  }
  for (int a = 0; a < dim; ++a) centre[a] /= total;

  std::vector<double> inertia(static_cast<std::size_t>(dim * dim), 0.0);  // covariance, row-major
  for (const index e : group) {
    double d[3];
    for (int a = 0; a < dim; ++a) d[a] = x(e)[a] - centre[a];
    for (int a = 0; a < dim; ++a) {
      for (int b = 0; b < dim; ++b) inertia[static_cast<std::size_t>(a * dim + b)] += mass(e) * d[a] * d[b];
    }
  }
  const std::vector<double> axis = detail::principal_axis(std::move(inertia), dim);
  for (std::size_t i = 0; i < group.size(); ++i) {
    double along = 0;
    for (int a = 0; a < dim; ++a) along += (x(group[i])[a] - centre[a]) * axis[static_cast<std::size_t>(a)];
    key[i] = along;
  }
}

}  // namespace

partition_result rib(std::span<const double> coords, int dim, std::span<const double> weights, int parts) {
  return detail::geometric_partition("chaos::rib", coords, dim, weights, parts, inertial_axis_key);
}

}  // namespace squall::chaos
