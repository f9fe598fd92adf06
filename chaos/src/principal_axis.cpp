// SPDX-License-Identifier: BSD-3-Clause
// The principal axis of a small symmetric matrix, by cyclic Jacobi rotations (rib's inertia).
#include <cmath>

#include "partition_support.hpp"

namespace squall::chaos::detail {
namespace {

// a = r^T a r and v = v r for the rotation r in the (p, q) plane that zeroes a[p][q].
void rotate(std::vector<double>& a, std::vector<double>& v, int n, int p, int q) {
  auto at = [n](std::vector<double>& m, int i, int j) -> double& { return m[static_cast<std::size_t>(i * n + j)]; };
  const double apq = at(a, p, q);
  if (apq == 0) return;
  const double theta = (at(a, q, q) - at(a, p, p)) / (2 * apq);
  const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::hypot(theta, 1.0));
  const double c = 1 / std::hypot(t, 1.0), s = t * c;
  for (int k = 0; k < n; ++k) {  // columns p and q: a r
    const double akp = at(a, k, p), akq = at(a, k, q);
    at(a, k, p) = c * akp - s * akq;
    at(a, k, q) = s * akp + c * akq;
  }
  for (int k = 0; k < n; ++k) {  // rows p and q: r^T (a r)
    const double apk = at(a, p, k), aqk = at(a, q, k);
    at(a, p, k) = c * apk - s * aqk;
    at(a, q, k) = s * apk + c * aqk;
  }
  at(a, p, q) = at(a, q, p) = 0;  // exactly, not rounding's idea of it
  for (int k = 0; k < n; ++k) {
    const double vkp = at(v, k, p), vkq = at(v, k, q);
    at(v, k, p) = c * vkp - s * vkq;
    at(v, k, q) = s * vkp + c * vkq;
  }
}

}  // namespace

std::vector<double> principal_axis(std::vector<double> m, int n) {
  std::vector<double> v(static_cast<std::size_t>(n * n), 0.0);
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i * n + i)] = 1;
  double scale = 0;
  for (double x : m) scale += x * x;
  for (int sweep = 0; sweep < 64; ++sweep) {
    double off = 0;
    for (int p = 0; p < n; ++p) {
      for (int q = p + 1; q < n; ++q) off += m[static_cast<std::size_t>(p * n + q)] * m[static_cast<std::size_t>(p * n + q)];
    }
    if (off <= 1e-30 * scale) break;
    for (int p = 0; p < n; ++p) {
      for (int q = p + 1; q < n; ++q) rotate(m, v, n, p, q);
    }
  }
  int best = 0;  // the largest eigenvalue (the lowest index among equal ones)
  for (int i = 1; i < n; ++i) {
    if (m[static_cast<std::size_t>(i * n + i)] > m[static_cast<std::size_t>(best * n + best)]) best = i;
  }
  std::vector<double> axis(static_cast<std::size_t>(n));
  int largest = 0;
  for (int i = 0; i < n; ++i) {
    axis[static_cast<std::size_t>(i)] = v[static_cast<std::size_t>(i * n + best)];
    if (std::abs(axis[static_cast<std::size_t>(i)]) > std::abs(axis[static_cast<std::size_t>(largest)])) largest = i;
  }
  if (axis[static_cast<std::size_t>(largest)] < 0) {
    for (double& x : axis) x = -x;
  }
  return axis;
}

}  // namespace squall::chaos::detail
