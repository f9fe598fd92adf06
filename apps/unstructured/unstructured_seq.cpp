// SPDX-License-Identifier: BSD-3-Clause
// unstructured_seq: the sequential reference of the paper's CFD kernel on an unstructured mesh.
#include <algorithm>
#include <iostream>

#include "squall/apps/figures.hpp"
#include "squall/apps/options.hpp"
#include "squall/apps/unstructured/block_cut.hpp"
#include "squall/apps/unstructured/mesh_generator.hpp"
#include "squall/apps/unstructured/options.hpp"
#include "squall/apps/unstructured/sequential.hpp"

namespace {

constexpr const char* kUsage =
    "usage: unstructured_seq [--nodes N] [--iterations I] [--seed S] [--parts P] [--json]\n"
    "  --nodes N       mesh size in nodes (default 9428, the paper's mesh; at most 227147)\n"
    "  --iterations I  flow iterations (default 50)\n"
    "  --seed S        generator seed (default 1)\n"
    "  --parts P       blocks for the block-partition cut statistic (default 32)\n"
    "  --json          print the figures as one JSON object on the last line\n";

int run(squall::apps::Options& options) {
  using namespace squall::apps;
  using namespace squall::apps::unstructured;
  const auto [nodes, iterations, seed, parts] = read_mesh_options(options);
  const bool json = options.flag("json");
  options.finish();

  PhaseTimer timer;
  const MeshShape shape = shape_for_nodes(nodes);
  Mesh mesh;
  {
    auto scope = timer.time("generate");
    mesh = generate_mesh(shape, seed);
  }
  const FlowParameters parameters;
  FlowState state;
  {
    auto scope = timer.time("prepare");
    state = prepare_flow(mesh, parameters);
  }
  PhaseTimer loops;
  for (std::size_t i = 0; i < iterations; ++i) run_iteration(mesh, parameters, state, loops);

  double low = state.values.front()[0], high = low, total = 0;
  for (const NodeValues& node : state.values) {
    for (double value : node) {
      low = std::min(low, value);
      high = std::max(high, value);
      total += value;
    }
  }
  const double compute = loops.compute_seconds();

  Figures figures;
  figures.add("app", std::string("unstructured"));
  figures.add("nodes", static_cast<std::int64_t>(mesh.node_count()));
  figures.add("edges", static_cast<std::int64_t>(mesh.edges.size()));
  figures.add("faces", static_cast<std::int64_t>(mesh.faces.size()));
  figures.add("block_parts", static_cast<std::int64_t>(parts));
  figures.add("block_cut_pct", block_cut_percent(mesh, parts));
  figures.add("iterations", static_cast<std::int64_t>(iterations));
  figures.add("seed", static_cast<std::int64_t>(seed));
  figures.add("value_min", low);
  figures.add("value_max", high);
  figures.add("value_total", total);
  figures.add("checksum", checksum_values(state.values).hex());
  figures.add("generate_s", timer.seconds("generate"));
  figures.add("prepare_s", timer.seconds("prepare"));
  figures.add("node_loops_s", loops.seconds("node loops"));
  figures.add("edge_loop_s", loops.seconds("edge loop"));
  figures.add("face_loop_s", loops.seconds("face loop"));
  figures.add("compute_s", compute);

  std::cout << "unstructured: mesh " << shape.cells[0] << "x" << shape.cells[1] << "x"
            << shape.cells[2] << " cells, hole " << shape.hole[0] << "x" << shape.hole[1] << "x"
            << shape.hole[2] << "\n";
  figures.print_lines(std::cout);
  if (json) figures.print_json(std::cout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return squall::apps::run_program(argc, argv, "unstructured_seq", kUsage, run);
}
