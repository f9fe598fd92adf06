// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/unstructured/run_options.hpp"

#include <algorithm>

#include "squall/apps/unstructured/mesh_generator.hpp"

namespace squall::apps::unstructured {

RunOptions read_run_options(Options& options, bool with_block_size) {
  RunOptions o;
  o.nodes = options.count("nodes", kPaperNodes);
  o.iterations = options.count("iterations", 50);
  o.seed = options.count("seed", 1);
  o.parts = std::max<std::size_t>(1, options.count("parts", 32));
  if (with_block_size) o.block_size = options.count("block-size", 4096);
  o.json = options.flag("json");
  options.finish();
  return o;
}

}  // namespace squall::apps::unstructured
