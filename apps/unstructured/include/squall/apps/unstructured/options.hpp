// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The options every unstructured program takes, the sequential reference and each parallel
// version (same names, same defaults: the paper's size), checked before anything is generated.
#include <cstddef>
#include <cstdint>

#include "squall/apps/options.hpp"

namespace squall::apps::unstructured {

struct MeshOptions {
  std::size_t nodes = 0;       // --nodes: the mesh's size, the nearest shape_for_nodes makes
  std::size_t iterations = 0;  // --iterations
  std::uint64_t seed = 0;      // --seed
  std::size_t parts = 0;       // --parts: blocks of the block-partition cut statistic
};

// The most nodes a mesh of shape_for_nodes has (its largest scale of the paper's shape).
std::size_t largest_mesh_nodes();

// --nodes, --iterations, --seed and --parts; throws OptionError naming the option and the value:
// --nodes 0, --nodes beyond largest_mesh_nodes() (10^11 made the largest mesh, saying nothing)
// and --parts 0 (taken for 1) are refused. The caller reads its own options and calls finish().
MeshOptions read_mesh_options(Options& options);

}  // namespace squall::apps::unstructured
