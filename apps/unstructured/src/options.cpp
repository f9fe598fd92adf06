// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/unstructured/options.hpp"

#include <limits>
#include <string>

#include "squall/apps/unstructured/mesh_generator.hpp"

namespace squall::apps::unstructured {

std::size_t largest_mesh_nodes() {
  static const std::size_t largest =
      expected_counts(shape_for_nodes(std::numeric_limits<std::size_t>::max())).nodes;
  return largest;
}

MeshOptions read_mesh_options(Options& options) {
  MeshOptions o;
  o.nodes = options.count("nodes", kPaperNodes);
  if (o.nodes == 0) throw OptionError("--nodes: a mesh has at least one node (the smallest has 8)");
  if (o.nodes > largest_mesh_nodes()) {
    throw OptionError("--nodes: " + std::to_string(o.nodes) + " is more than the largest mesh has (" +
                      std::to_string(largest_mesh_nodes()) + " nodes)");
  }
  o.iterations = options.count("iterations", 50);
  o.seed = options.count("seed", 1);
  o.parts = options.count("parts", 32);
  if (o.parts == 0) throw OptionError("--parts: the block partition has at least one block");
  return o;
}

}  // namespace squall::apps::unstructured
