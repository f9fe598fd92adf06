// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/unstructured/run_options.hpp"

#include <string>

#include "squall/apps/unstructured/mesh_generator.hpp"
#include "squall/apps/unstructured/options.hpp"

namespace squall::apps::unstructured {

RunOptions read_run_options(Options& options, bool with_block_size, std::size_t parts) {
  RunOptions o;
  const MeshOptions mesh = read_mesh_options(options);
  o.nodes = mesh.nodes;
  o.iterations = mesh.iterations;
  o.seed = mesh.seed;
  o.parts = mesh.parts;
  if (with_block_size) {
    // A block of fewer bytes than a node's values divided by zero in the renaming before the
    // allocation could refuse it.
    o.block_size = options.block_size();
  }
  o.json = options.flag("json");
  options.finish();
  const std::size_t mesh_nodes = expected_counts(shape_for_nodes(o.nodes)).nodes;
  if (mesh_nodes < parts) {
    throw OptionError("--nodes " + std::to_string(o.nodes) + " makes a mesh of " + std::to_string(mesh_nodes) +
                      " nodes, too few to give each of the job's " + std::to_string(parts) +
                      " nodes (or MPI processes) a part: give a larger --nodes, or run on at most " +
                      std::to_string(mesh_nodes));
  }
  return o;
}

}  // namespace squall::apps::unstructured
