// SPDX-License-Identifier: BSD-3-Clause
#include "grid.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "squall/apps/checksum.hpp"

namespace squall::apps::jacobi {

double initial_value(int i, int j) {
  // splitmix64 of the point's coordinates; 53 bits make the fraction.
  std::uint64_t x = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(i)) << 32) | static_cast<std::uint32_t>(j);
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

double source_value(int i, int j, int n) {
  const double h = 1.0 / n;
  const double angle = 2 * std::numbers::pi / n;
  return 0.25 * h * h * 100.0 * std::sin(angle * i) * std::cos(angle * j);
}

std::vector<double> solve_sequential(int n, int iterations, std::vector<double>& residual) {
  const auto at = [n](int i, int j) { return static_cast<std::size_t>(i) * n + j; };
  std::vector<double> u(static_cast<std::size_t>(n) * n), next(u.size()), f(u.size());
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      u[at(i, j)] = initial_value(i, j);
      f[at(i, j)] = source_value(i, j, n);
    }
  }
  residual.assign(static_cast<std::size_t>(iterations), 0.0);
  for (int k = 0; k < iterations; ++k) {
    double worst = 0;
    for (int i = 0; i < n; ++i) {
      const double* up = &u[at((i + n - 1) % n, 0)];
      const double* row = &u[at(i, 0)];
      const double* down = &u[at((i + 1) % n, 0)];
      const double* fr = &f[at(i, 0)];
      double* out = &next[at(i, 0)];
      for (int j = 0; j < n; ++j) {
        const double west = row[j == 0 ? n - 1 : j - 1];
        const double east = row[j == n - 1 ? 0 : j + 1];
        out[j] = relax(up[j], down[j], west, east, fr[j]);
        worst = std::max(worst, std::fabs(out[j] - row[j]));
      }
    }
    residual[static_cast<std::size_t>(k)] = worst;
    u.swap(next);
  }
  return u;
}

std::uint64_t grid_checksum(const std::vector<double>& u) {
  Checksum sum;
  for (const double v : u) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    sum.add(bits);
  }
  return sum.value();
}

}  // namespace squall::apps::jacobi
