// SPDX-License-Identifier: BSD-3-Clause
// The scripted irregular loop of the update protocols' tests: a 1-D array of doubles, each
// element reading its two neighbours (cyclic) and, for every 50th, one far element. Each node
// writes the elements whose block it is home to; the others it reads. The program runs
//
//   setup: each node writes its elements' initial values; barrier (or node_update's
//          declare_reads, which ends the phase too)
//   per iteration: y = step(x) on its own elements; barrier; x = y; barrier
//
// and the sequential reference runs the same steps on one vector. From the pattern alone the
// test knows, for every node, which blocks and elements of other nodes it reads.
#pragma once
#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

#include <squall/memory.hpp>
#include <squall/runtime.hpp>
#include <squall/tsm.hpp>

namespace update_test {

constexpr std::size_t per_block = 4096 / sizeof(double);
constexpr std::size_t blocks_per_node = 2;

inline std::size_t elements_for(int nodes) { return static_cast<std::size_t>(nodes) * blocks_per_node * per_block; }

inline std::vector<std::size_t> neighbours(std::size_t i, std::size_t n) {
  std::vector<std::size_t> r{(i + n - 1) % n, (i + 1) % n};
  if (i % 50 == 0) r.push_back((i * 37 + 11) % n);
  return r;
}

inline double initial(std::size_t i) { return static_cast<double>(i % 17) + 0.5 * static_cast<double>(i % 3); }

inline double step(const double* x, std::size_t i, std::size_t n) {
  const auto near = neighbours(i, n);
  double sum = 0;
  for (const std::size_t j : near) sum += x[j];
  return 0.5 * x[i] + 0.5 * sum / static_cast<double>(near.size());
}

inline std::vector<double> reference(std::size_t n, int iterations) {
  std::vector<double> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = initial(i);
  for (int it = 0; it < iterations; ++it) {
    for (std::size_t i = 0; i < n; ++i) y[i] = step(x.data(), i, n);
    x = y;
  }
  return x;
}

// Where the shared array lies: the home and block (in its segment) of each element.
struct layout {
  std::vector<int> home;
  std::vector<squall::memory::block_index> block;

  layout(const double* x, std::size_t n) : home(n), block(n) {
    const squall::memory::segment s = squall::memory::segment_of(x);
    for (std::size_t i = 0; i < n; ++i) {
      block[i] = s.block_of(x + i);
      home[i] = s.home(block[i]);
    }
  }

  // The elements of other nodes' blocks that `reader` reads, ascending.
  std::set<std::size_t> elements_read(int reader) const {
    std::set<std::size_t> r;
    const std::size_t n = home.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (home[i] != reader) continue;
      for (const std::size_t j : neighbours(i, n)) {
        if (home[j] != reader) r.insert(j);
      }
    }
    return r;
  }
  std::set<squall::memory::block_index> blocks_read(int reader) const {
    std::set<squall::memory::block_index> r;
    for (const std::size_t j : elements_read(reader)) r.insert(block[j]);
    return r;
  }
};

// The setup's writes (no barrier: the caller ends the phase).
inline void write_initial(double* x, const layout& where) {
  for (std::size_t i = 0; i < where.home.size(); ++i) {
    if (where.home[i] == squall::node()) x[i] = initial(i);
  }
}

// The iterations, on several arrays at once (each with its layout), phases shared.
struct array {
  double* x;
  const layout* where;
};
inline void iterate(std::vector<array> arrays, int iterations) {
  std::vector<std::vector<double>> y(arrays.size());
  for (std::size_t a = 0; a < arrays.size(); ++a) y[a].resize(arrays[a].where->home.size());
  const int me = squall::node();
  for (int it = 0; it < iterations; ++it) {
    for (std::size_t a = 0; a < arrays.size(); ++a) {
      const std::size_t n = y[a].size();
      for (std::size_t i = 0; i < n; ++i) {
        if (arrays[a].where->home[i] == me) y[a][i] = step(arrays[a].x, i, n);
      }
    }
    squall::tsm::barrier();
    for (std::size_t a = 0; a < arrays.size(); ++a) {
      for (std::size_t i = 0; i < y[a].size(); ++i) {
        if (arrays[a].where->home[i] == me) arrays[a].x[i] = y[a][i];
      }
    }
    squall::tsm::barrier();
  }
}

}  // namespace update_test
