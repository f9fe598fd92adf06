// SPDX-License-Identifier: BSD-3-Clause
// unstructured_chaos: the CHAOS version of unstructured (section 5.1). Mesh nodes partitioned
// by RCB, edges and faces by almost-owner-computes; the inspector runs once over the edge and
// face lists; each iteration gathers the ghost nodes' values, runs the flow kernels on the
// localised lists and scatter-adds the ghost residuals into their owners (the node weights
// once, the same way).
#include <iostream>
#include <span>
#include <vector>

#include <squall/chaos/schedule.hpp>
#include <squall/squall.hpp>

#include "squall/apps/squall_counts.hpp"
#include "squall/apps/unstructured/mesh_generator.hpp"
#include "squall/apps/unstructured/mesh_partition.hpp"
#include "squall/apps/unstructured/parallel_report.hpp"

namespace {

namespace chaos = squall::chaos;
using namespace squall::apps;
using namespace squall::apps::unstructured;

constexpr const char* kUsage =
    "usage: squallrun -n N unstructured_chaos [--nodes N] [--iterations I] [--seed S] [--parts P] [--json]\n"
    "  the options of unstructured_seq (--parts: the blocks of the block_cut_pct it reports)\n";

struct AddValues {
  NodeValues operator()(NodeValues a, const NodeValues& b) const {
    for (int k = 0; k < kVariables; ++k) a[k] += b[k];
    return a;
  }
};

// This node's edges and faces with their mesh nodes renamed to local offsets (owned, then
// ghosts) by the inspector.
struct LocalLists {
  std::vector<Edge> edges;
  std::vector<Face> faces;
  chaos::schedule schedule;
};

LocalLists inspect_lists(const Mesh& mesh, const MeshPartition& part) {
  std::vector<chaos::index> ends;
  for (std::int64_t e : part.edges) {
    const Edge& edge = mesh.edges[static_cast<std::size_t>(e)];
    ends.insert(ends.end(), {edge.a, edge.b});
  }
  for (std::int64_t f : part.faces) {
    for (NodeId node : mesh.faces[static_cast<std::size_t>(f)].nodes) ends.push_back(node);
  }
  LocalLists local;
  local.schedule = chaos::inspect(part.table, {std::span<chaos::index>(ends)});
  std::size_t at = 0;
  auto next = [&] { return static_cast<NodeId>(ends[at++]); };
  for (std::size_t e = 0; e < part.edges.size(); ++e) {
    const NodeId a = next();
    local.edges.push_back({a, next()});
  }
  for (std::size_t f = 0; f < part.faces.size(); ++f) {
    const NodeId n0 = next(), n1 = next();
    local.faces.push_back({{n0, n1, next()}});
  }
  return local;
}

int run(Options& command_line) {
  const RunOptions options = read_run_options(command_line, false, static_cast<std::size_t>(squall::nodes()));
  const Mesh mesh = generate_mesh(shape_for_nodes(options.nodes), options.seed);
  const FlowParameters parameters;

  PhaseTimer phases;
  const MeshPartition part = [&] {
    auto scope = phases.time("partition");
    return partition_mesh(mesh);
  }();
  // Geometry of this node's edges and faces, from the global coordinates.
  std::vector<Edge> global_edges;
  std::vector<Face> global_faces;
  for (std::int64_t e : part.edges) global_edges.push_back(mesh.edges[static_cast<std::size_t>(e)]);
  for (std::int64_t f : part.faces) global_faces.push_back(mesh.faces[static_cast<std::size_t>(f)]);
  std::vector<EdgeWeights> edge_weights(global_edges.size());
  std::vector<double> face_weights(global_faces.size());
  compute_edge_weights(global_edges, mesh.coords, parameters, edge_weights);
  compute_face_weights(global_faces, mesh.coords, parameters, face_weights);
  const std::size_t owned = static_cast<std::size_t>(part.table.local_size());
  std::vector<Vec3> owned_coords;
  for (chaos::index g : part.table.owned()) owned_coords.push_back(mesh.coords[static_cast<std::size_t>(g)]);

  CountedRegion region;
  LocalLists local;
  {
    auto scope = phases.time("inspector");
    local = inspect_lists(mesh, part);
  }
  const auto slots = static_cast<std::size_t>(local.schedule.ghost_end());
  std::vector<double> node_weight(slots, 0.0);
  std::vector<NodeValues> values(slots), residual(slots);
  {
    auto scope = phases.time("node weights");
    accumulate_edge_node_weights(local.edges, edge_weights, node_weight);
    accumulate_face_node_weights(local.faces, face_weights, node_weight);
    chaos::scatter_op(local.schedule, std::span<double>(node_weight), chaos::combine::add{});
    initial_values(owned_coords, std::span<NodeValues>(values.data(), owned));
  }
  for (std::size_t i = 0; i < options.iterations; ++i) {
    {
      auto scope = phases.time("gather");
      chaos::gather(local.schedule, std::span<NodeValues>(values));
    }
    {
      auto scope = phases.time("node loops");
      reset_residuals(residual);
    }
    {
      auto scope = phases.time("edge loop");
      accumulate_edge_fluxes(local.edges, edge_weights, values, residual);
    }
    {
      auto scope = phases.time("face loop");
      accumulate_face_fluxes(local.faces, face_weights, parameters.free_stream, values, residual);
    }
    {
      auto scope = phases.time("scatter");
      chaos::scatter_op(local.schedule, std::span<NodeValues>(residual), AddValues{});
    }
    {
      auto scope = phases.time("node loops");
      update_values(std::span<const NodeValues>(residual.data(), owned),
                    std::span<const double>(node_weight.data(), owned), std::span<NodeValues>(values.data(), owned));
    }
  }
  region.end();

  const chaos::schedule_figures moved = local.schedule.figures();
  const double ghosts = squall::allreduce(static_cast<double>(local.schedule.ghosts()));
  const double peers = squall::allreduce(static_cast<double>(moved.peers_sent_to));
  const std::vector<std::int64_t> names(part.table.owned().begin(), part.table.owned().end());
  const ParallelRun report{"chaos", std::span<const NodeValues>(values.data(), owned), names, &region, &phases,
                           part.cut_edges_pct};
  return report_parallel_run(mesh, options, report, [&](Figures& figures) {
    figures.add("ghost_nodes", ghosts);
    figures.add("schedule_peers", peers);
    figures.add("chaos_messages", peers * static_cast<double>(2 * options.iterations) + peers);
  });
}

}  // namespace

int main(int argc, char** argv) {
  squall::runtime runtime(&argc, &argv);
  return run_program(argc, argv, "unstructured_chaos", kUsage, run);
}
