// SPDX-License-Identifier: BSD-3-Clause
// The TSM versions of unstructured. Every node generates the mesh and works out the same plan
// (renaming, which part runs each edge and face, which nodes need locks); the node values and
// residuals are stache arrays under the new names, each block's home the part owning its first
// element. Part p is squall node p. Each iteration: owners reset their residuals; each node runs
// its edges and faces, reading values wherever they live and adding into residuals (under a
// lock for an external node: one that edges or faces of two or more parts update; TSM-reduction
// adds into a private array instead and then reduces it into the owners' residuals in N
// pipelined steps); owners update their values. Barriers separate the phases.
#include "squall/apps/unstructured/tsm_versions.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>

#include "squall/apps/checksum.hpp"
#include "squall/apps/figures.hpp"
#include "squall/apps/options.hpp"
#include "squall/apps/phase_timer.hpp"
#include "squall/apps/run_report.hpp"
#include "squall/apps/squall_counts.hpp"
#include "squall/apps/unstructured/block_cut.hpp"
#include "squall/apps/unstructured/mesh_generator.hpp"
#include "squall/apps/unstructured/partition.hpp"
#include "squall/apps/unstructured/reference_check.hpp"
#include "squall/apps/unstructured/run_options.hpp"
#include "squall/apps/unstructured/sequential.hpp"

namespace squall::apps::unstructured {
namespace {

namespace tsm = squall::tsm;

constexpr double kTotalTolerance = 1e-9;  // relative, on value_total (apps/README.md)

constexpr const char* kUsage =
    "usage: squallrun -n N unstructured_tsm_<step> [--nodes N] [--iterations I] [--seed S] [--parts P]\n"
    "                  [--block-size B] [--json]\n"
    "  --nodes N       mesh size in nodes (default 9428, the paper's mesh)\n"
    "  --iterations I  flow iterations (default 50)\n"
    "  --seed S        generator seed (default 1)\n"
    "  --parts P       blocks for the block-partition cut statistic (default 32)\n"
    "  --block-size B  stache block size in bytes, a power of two of a page or more (default 4096)\n"
    "  --json          print the figures as one JSON object on the last line\n"
    "steps: initial, partition1, partition2, padding, reduction (one executable each)\n";

TsmStep g_step = TsmStep::initial;  // run_program takes a plain function

std::string version_of(TsmStep step) {
  switch (step) {
    case TsmStep::initial: return "tsm_initial";
    case TsmStep::partition1: return "tsm_partition1";
    case TsmStep::partition2: return "tsm_partition2";
    case TsmStep::padding: return "tsm_padding";
    case TsmStep::reduction: return "tsm_reduction";
  }
  return "tsm";
}

// What every node works out the same from the whole mesh.
struct Plan {
  Renaming names;
  Mesh mesh;  // under the new names
  std::vector<std::uint32_t> edge_part, face_part;
  std::vector<char> external;  // per new name: updated by items of two or more parts
};

// The plan under `names`: the renamed mesh, each item's part (by the paper's rule, or block
// parts of the item lists for TSM-initial), and which names are external.
// The parts whose edges and faces update each name of `plan`, in increasing order.
std::vector<std::vector<std::uint32_t>> updating_parts(const Plan& plan) {
  std::vector<std::vector<std::uint32_t>> updaters(plan.names.length());
  for (std::size_t e = 0; e < plan.mesh.edges.size(); ++e) {
    updaters[plan.mesh.edges[e].a].push_back(plan.edge_part[e]);
    updaters[plan.mesh.edges[e].b].push_back(plan.edge_part[e]);
  }
  for (std::size_t f = 0; f < plan.mesh.faces.size(); ++f) {
    for (NodeId node : plan.mesh.faces[f].nodes) updaters[node].push_back(plan.face_part[f]);
  }
  for (auto& parts : updaters) {
    std::sort(parts.begin(), parts.end());
    parts.erase(std::unique(parts.begin(), parts.end()), parts.end());
  }
  return updaters;
}

Plan plan_under(const Mesh& mesh, Renaming names, bool block_items_of_lists) {
  Plan plan;
  plan.names = std::move(names);
  plan.mesh = renamed_mesh(mesh, plan.names);
  const std::size_t parts = plan.names.parts();
  if (block_items_of_lists) {
    plan.edge_part = block_items(mesh.edges.size(), parts);
    plan.face_part = block_items(mesh.faces.size(), parts);
  } else {
    plan.edge_part = assign_edges(plan.mesh.edges, plan.names);
    plan.face_part = assign_faces(plan.mesh.faces, plan.names);
  }
  const auto updaters = updating_parts(plan);
  plan.external.resize(updaters.size());
  for (std::size_t k = 0; k < updaters.size(); ++k) plan.external[k] = updaters[k].size() > 1 ? 1 : 0;
  return plan;
}

// Names updated by the same parts (the part alone: its interior; the part and the neighbours
// across one stretch of its boundary) get the same number.
std::vector<std::uint32_t> sharer_groups(const Plan& plan) {
  const auto updaters = updating_parts(plan);
  std::map<std::vector<std::uint32_t>, std::uint32_t> numbers;
  for (const auto& parts : updaters) numbers.emplace(parts, 0);
  std::uint32_t next = 0;
  for (auto& [parts, number] : numbers) number = next++;
  std::vector<std::uint32_t> group(updaters.size());
  for (std::size_t k = 0; k < updaters.size(); ++k) group[k] = numbers.at(updaters[k]);
  return group;
}

Plan make_plan(const Mesh& mesh, TsmStep step, std::size_t parts, std::size_t block_size) {
  const std::size_t per_block = std::max<std::size_t>(1, block_size / sizeof(NodeValues));
  // Names per padded run: the fewest whose values fill whole blocks.
  const std::size_t align = block_size / std::gcd(block_size, sizeof(NodeValues));
  switch (step) {
    case TsmStep::initial: return plan_under(mesh, block_renaming(mesh.node_count(), parts), true);
    case TsmStep::partition1: return plan_under(mesh, rcb_renaming(mesh.coords, {parts, 0, 1}), false);
    case TsmStep::partition2:
    case TsmStep::reduction: return plan_under(mesh, rcb_renaming(mesh.coords, {parts, per_block, 1}), false);
    case TsmStep::padding: {
      // Level 2's order, then each part's names regrouped by the parts that update them, each
      // group on blocks of its own: the owner's unlocked updates of its interior never share a
      // block with the locked updates of its boundary, nor one stretch of the boundary with
      // another that other neighbours update. (Who updates a name does not depend on its
      // place inside its part.)
      const Plan level2 = plan_under(mesh, rcb_renaming(mesh.coords, {parts, per_block, align}), false);
      const GroupLayout layout{.block_bytes = block_size, .name_bytes = sizeof(NodeValues), .align = align};
      return plan_under(mesh, padded_groups(level2.names, sharer_groups(level2), layout), false);
    }
  }
  throw std::logic_error("unstructured: unknown TSM step");
}

// This node's edges and faces with their weights: `plain` ones need no lock (all their nodes
// internal, or TSM-reduction), `locked` ones update at least one external node.
struct Work {
  std::vector<Edge> plain_edges, locked_edges;
  std::vector<EdgeWeights> plain_edge_weights, locked_edge_weights;
  std::vector<Face> plain_faces, locked_faces;
  std::vector<double> plain_face_weights, locked_face_weights;
};

Work my_work(const Plan& plan, std::span<const EdgeWeights> edge_weights, std::span<const double> face_weights,
             std::uint32_t me, bool locks) {
  Work w;
  for (std::size_t e = 0; e < plan.mesh.edges.size(); ++e) {
    if (plan.edge_part[e] != me) continue;
    const Edge& edge = plan.mesh.edges[e];
    const bool locked = locks && (plan.external[edge.a] || plan.external[edge.b]);
    (locked ? w.locked_edges : w.plain_edges).push_back(edge);
    (locked ? w.locked_edge_weights : w.plain_edge_weights).push_back(edge_weights[e]);
  }
  for (std::size_t f = 0; f < plan.mesh.faces.size(); ++f) {
    if (plan.face_part[f] != me) continue;
    const Face& face = plan.mesh.faces[f];
    bool locked = false;
    for (NodeId node : face.nodes) locked = locked || (locks && plan.external[node]);
    (locked ? w.locked_faces : w.plain_faces).push_back(face);
    (locked ? w.locked_face_weights : w.plain_face_weights).push_back(face_weights[f]);
  }
  return w;
}

double percent(std::size_t part, std::size_t whole) {
  return whole == 0 ? 0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

int run(Options& options) {
  const TsmStep step = g_step;
  const RunOptions o = read_run_options(options, true, static_cast<std::size_t>(squall::nodes()));
  const std::size_t iterations = o.iterations, parts_statistic = o.parts, block_size = o.block_size;
  const bool json = o.json;

  const int me = squall::node();
  const auto n = static_cast<std::size_t>(squall::nodes());
  const bool locks_used = step != TsmStep::reduction;
  const Mesh mesh = generate_mesh(shape_for_nodes(o.nodes), o.seed);
  const Plan plan = make_plan(mesh, step, n, block_size);
  const Renaming& names = plan.names;
  const std::size_t length = names.length();
  const std::size_t first = names.first[static_cast<std::size_t>(me)];
  const std::size_t count = names.count[static_cast<std::size_t>(me)];

  const FlowParameters parameters;
  std::vector<EdgeWeights> edge_weights(plan.mesh.edges.size());
  std::vector<double> face_weights(plan.mesh.faces.size());
  std::vector<double> node_weight(length, 0.0);  // read-only: every node keeps its own copy
  compute_edge_weights(plan.mesh.edges, plan.mesh.coords, parameters, edge_weights);
  compute_face_weights(plan.mesh.faces, plan.mesh.coords, parameters, face_weights);
  accumulate_edge_node_weights(plan.mesh.edges, edge_weights, node_weight);
  accumulate_face_node_weights(plan.mesh.faces, face_weights, node_weight);
  // Padding names inside an owner's range (TSM-padding's, between its groups) touch no
  // edge or face; a weight of 1 keeps their values, which nobody reads, finite.
  for (double& w : node_weight) w = w == 0 ? 1 : w;
  const Work work = my_work(plan, edge_weights, face_weights, static_cast<std::uint32_t>(me), locks_used);

  const tsm::options shared{.block_size = block_size,
                            .homes = memory::home_policy::function([&names, block_size](memory::block_index b) {
                              return static_cast<int>(names.part_of(static_cast<NodeId>(b * block_size / sizeof(NodeValues))));
                            })};
  NodeValues* values_at = tsm::alloc<NodeValues>(length, shared);
  NodeValues* residual_at = tsm::alloc<NodeValues>(length, shared);
  const std::span<NodeValues> values(values_at, length), residual(residual_at, length);
  const std::span<NodeValues> my_values = values.subspan(first, count), my_residual = residual.subspan(first, count);
  std::optional<tsm::lock_array> locks;
  if (locks_used) locks.emplace(length);
  initial_values(std::span<const Vec3>(plan.mesh.coords).subspan(first, count), my_values);

  // Locked updates: the kernel runs on a copy of the item's values into a zeroed scratch
  // residual, then each node's share is added under its lock (external) or directly.
  std::uint64_t lock_acquires = 0;
  auto add_into = [&](NodeId node, const NodeValues& delta) {
    const bool lock = plan.external[node] != 0;
    if (lock) {
      locks->acquire(node);
      ++lock_acquires;
    }
    for (std::size_t k = 0; k < kVariables; ++k) residual[node][k] += delta[k];
    if (lock) locks->release(node);
  };
  auto locked_edges = [&] {
    static constexpr Edge kLocal{0, 1};
    for (std::size_t i = 0; i < work.locked_edges.size(); ++i) {
      const Edge& e = work.locked_edges[i];
      const std::array<NodeValues, 2> at{values[e.a], values[e.b]};
      std::array<NodeValues, 2> delta{};
      accumulate_edge_fluxes({&kLocal, 1}, {&work.locked_edge_weights[i], 1}, at, delta);
      add_into(e.a, delta[0]);
      add_into(e.b, delta[1]);
    }
  };
  auto locked_faces = [&] {
    static constexpr Face kLocal{{0, 1, 2}};
    for (std::size_t i = 0; i < work.locked_faces.size(); ++i) {
      const Face& f = work.locked_faces[i];
      const std::array<NodeValues, 3> at{values[f.nodes[0]], values[f.nodes[1]], values[f.nodes[2]]};
      std::array<NodeValues, 3> delta{};
      accumulate_face_fluxes({&kLocal, 1}, {&work.locked_face_weights[i], 1}, parameters.free_stream, at, delta);
      for (std::size_t k = 0; k < 3; ++k) add_into(f.nodes[k], delta[k]);
    }
  };

  // TSM-reduction: the names this node's items touch, cut into the parts' pieces.
  std::vector<NodeId> touched;
  for (const Edge& e : work.plain_edges) touched.insert(touched.end(), {e.a, e.b});
  for (const Face& f : work.plain_faces) touched.insert(touched.end(), f.nodes.begin(), f.nodes.end());
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  std::vector<std::size_t> piece_start(n + 1);
  for (std::size_t p = 0; p <= n; ++p) {
    piece_start[p] = static_cast<std::size_t>(std::lower_bound(touched.begin(), touched.end(), names.first[p]) - touched.begin());
  }
  std::vector<NodeValues> contributions(step == TsmStep::reduction ? length : 0);

  PhaseTimer timer;
  auto lock_iteration = [&] {
    {
      auto scope = timer.time("node_loops");
      reset_residuals(my_residual);
    }
    {
      auto scope = timer.time("sync");
      tsm::barrier();
    }
    {
      auto scope = timer.time("edge_loop");
      accumulate_edge_fluxes(work.plain_edges, work.plain_edge_weights, values, residual);
      locked_edges();
    }
    {
      auto scope = timer.time("face_loop");
      accumulate_face_fluxes(work.plain_faces, work.plain_face_weights, parameters.free_stream, values, residual);
      locked_faces();
    }
    {
      auto scope = timer.time("sync");
      tsm::barrier();
    }
  };
  auto reduction_iteration = [&] {
    {
      auto scope = timer.time("edge_loop");
      for (NodeId node : touched) contributions[node] = NodeValues{};
      accumulate_edge_fluxes(work.plain_edges, work.plain_edge_weights, values, contributions);
    }
    {
      auto scope = timer.time("face_loop");
      accumulate_face_fluxes(work.plain_faces, work.plain_face_weights, parameters.free_stream, values, contributions);
    }
    auto scope = timer.time("reduction");
    // Step 0 is every node's own piece, which it sets (no reset needed); then the others' pieces.
    std::copy_n(contributions.begin() + static_cast<std::ptrdiff_t>(first), count, my_residual.begin());
    tsm::barrier();
    for (std::size_t s = 1; s < n; ++s) {
      const std::size_t piece = (static_cast<std::size_t>(me) + s) % n;
      for (std::size_t k = piece_start[piece]; k < piece_start[piece + 1]; ++k) {
        const NodeId node = touched[k];
        for (std::size_t v = 0; v < kVariables; ++v) residual[node][v] += contributions[node][v];
      }
      tsm::barrier();
    }
  };

  CountedRegion region;
  for (std::size_t i = 0; i < iterations; ++i) {
    if (step == TsmStep::reduction) {
      reduction_iteration();
    } else {
      lock_iteration();
    }
    {
      auto scope = timer.time("node_loops");
      update_values(my_residual, std::span<const double>(node_weight).subspan(first, count), my_values);
    }
    auto scope = timer.time("sync");
    tsm::barrier();
  }
  region.end();

  std::vector<std::pair<std::string, double>> phases;
  for (const char* phase : {"edge_loop", "face_loop", "reduction", "node_loops", "sync"}) {
    phases.emplace_back(phase, squall::allreduce(timer.seconds(phase), squall::op::max{}));
  }
  const double acquires = squall::allreduce(static_cast<double>(lock_acquires));
  std::size_t external_count = 0;
  for (std::size_t p = 0; p < n; ++p) {
    for (std::size_t k = names.first[p]; k < names.first[p] + names.count[p]; ++k) external_count += plan.external[k] != 0;
  }

  int status = 0;
  if (me == 0) {
    // The result under the old names, beside the sequential reference from the same options.
    std::vector<NodeValues> result(mesh.node_count());
    for (std::size_t old = 0; old < result.size(); ++old) result[old] = values[names.name[old]];
    const ReferenceRun reference_run = run_reference(mesh, iterations);
    const FlowState& reference = reference_run.state;
    double total = 0, reference_total = 0;
    for (std::size_t old = 0; old < result.size(); ++old) {
      for (std::size_t k = 0; k < kVariables; ++k) {
        total += result[old][k];
        reference_total += reference.values[old][k];
      }
    }
    const std::string checksum = checksum_values(result).hex(), reference_checksum = checksum_values(reference.values).hex();
    const bool ok = checksum == reference_checksum ||
                    std::abs(total - reference_total) <= kTotalTolerance * std::abs(reference_total);
    status = ok ? 0 : 1;

    Figures figures;
    add_run_figures(figures, {"unstructured", version_of(step), static_cast<int>(n), region.seconds(), region.counts(), ok,
                              reference_run.seconds});
    for (const auto& [phase, seconds] : phases) figures.add("phase_" + phase + "_s", seconds);
    figures.add("lock_acquires", acquires);
    figures.add("block_size", static_cast<std::int64_t>(block_size));
    figures.add("mesh_nodes", static_cast<std::int64_t>(mesh.node_count()));
    figures.add("mesh_edges", static_cast<std::int64_t>(mesh.edges.size()));
    figures.add("iterations", static_cast<std::int64_t>(iterations));
    figures.add("shared_length", static_cast<std::int64_t>(length));
    figures.add("cut_edges_pct", cut_edges_percent(plan.mesh.edges, names));
    figures.add("external_nodes_pct", percent(external_count, mesh.node_count()));
    figures.add("block_parts", static_cast<std::int64_t>(parts_statistic));
    figures.add("block_cut_pct", block_cut_percent(mesh, parts_statistic));
    figures.add("value_total", total);
    figures.add("value_total_reference", reference_total);
    figures.add("checksum", checksum);
    figures.add("checksum_reference", reference_checksum);
    std::cout << "unstructured " << version_of(step) << " on " << n << " nodes\n";
    figures.print_lines(std::cout);
    if (json) figures.print_json(std::cout);
  }
  tsm::barrier();
  locks.reset();
  tsm::free(residual_at);
  tsm::free(values_at);
  return status;
}

}  // namespace

int tsm_main(int argc, char** argv, TsmStep step) {
  squall::runtime runtime(&argc, &argv);
  g_step = step;
  const std::string program = "unstructured_" + version_of(step);
  return run_program(argc, argv, program.c_str(), kUsage, run);
}

}  // namespace squall::apps::unstructured
