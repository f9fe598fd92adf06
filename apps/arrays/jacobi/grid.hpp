// SPDX-License-Identifier: BSD-3-Clause
// The Jacobi problem both versions solve: -Laplace(u) = f on an n x n periodic grid (a torus,
// as in the paper's example), relaxed a fixed number of times from a pseudo-random start.
//
// Every point is updated by relax() with its four neighbours' previous values, in the same
// order in the sequential loop and in a block, so the two give bitwise equal grids (built
// with -ffp-contract=off, never -ffast-math).
#pragma once
#include <cstdint>
#include <vector>

namespace squall::apps::jacobi {

// The update of one point: the mean of its neighbours plus the source term.
inline double relax(double north, double south, double west, double east, double f) {
  return 0.25 * ((north + south) + (west + east)) + f;
}

// u at (i, j) before the first iteration: in [0, 1), a pure function of the point.
double initial_value(int i, int j);
// f at (i, j), h^2/4 included: a smooth heat source and sink of zero mean.
double source_value(int i, int j, int n);

// The sequential reference: `iterations` sweeps over the whole grid (row-major, n * n). Returns
// the final grid; residual[k] is max |u(k+1) - u(k)| over the grid.
std::vector<double> solve_sequential(int n, int iterations, std::vector<double>& residual);

// FNV-1a of the grid's bit patterns, row-major.
std::uint64_t grid_checksum(const std::vector<double>& u);

}  // namespace squall::apps::jacobi
