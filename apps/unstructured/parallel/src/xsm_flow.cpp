// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/unstructured/xsm_flow.hpp"

#include <algorithm>
#include <memory>
#include <span>
#include <vector>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>
#include <squall/xsm.hpp>
#include <squall/xsm/block_update.hpp>
#include <squall/xsm/direct_reduction.hpp>
#include <squall/xsm/node_update.hpp>

#include "squall/apps/squall_counts.hpp"
#include "squall/apps/unstructured/block_renaming.hpp"
#include "squall/apps/unstructured/mesh_generator.hpp"
#include "squall/apps/unstructured/mesh_partition.hpp"
#include "squall/apps/unstructured/parallel_report.hpp"

namespace squall::apps::unstructured {
namespace {

namespace tsm = squall::tsm;
namespace xsm = squall::xsm;

// This node's edges and faces named by their shared-array elements, with their geometry.
struct ElementLists {
  std::vector<Edge> edges;
  std::vector<Face> faces;
  std::vector<EdgeWeights> edge_weights;
  std::vector<double> face_weights;
  std::vector<std::int64_t> touched;  // elements the lists name, ascending, once each
};

ElementLists element_lists(const Mesh& mesh, const MeshPartition& part, const BlockRenaming& names,
                           const FlowParameters& parameters) {
  ElementLists out;
  std::vector<Edge> global_edges;
  std::vector<Face> global_faces;
  for (std::int64_t e : part.edges) global_edges.push_back(mesh.edges[static_cast<std::size_t>(e)]);
  for (std::int64_t f : part.faces) global_faces.push_back(mesh.faces[static_cast<std::size_t>(f)]);
  out.edge_weights.resize(global_edges.size());
  out.face_weights.resize(global_faces.size());
  compute_edge_weights(global_edges, mesh.coords, parameters, out.edge_weights);
  compute_face_weights(global_faces, mesh.coords, parameters, out.face_weights);
  auto rename = [&](NodeId node) {
    out.touched.push_back(names.element_of(node));
    return static_cast<NodeId>(names.element_of(node));
  };
  for (const Edge& e : global_edges) out.edges.push_back({rename(e.a), rename(e.b)});
  for (const Face& f : global_faces) out.faces.push_back({{rename(f.nodes[0]), rename(f.nodes[1]), rename(f.nodes[2])}});
  std::sort(out.touched.begin(), out.touched.end());
  out.touched.erase(std::unique(out.touched.begin(), out.touched.end()), out.touched.end());
  return out;
}

struct AddValues {
  NodeValues operator()(const NodeValues& a, const NodeValues& b) const {
    NodeValues sum;
    for (int k = 0; k < kVariables; ++k) sum[k] = a[k] + b[k];
    return sum;
  }
};

// The doubles of the given elements in an array of kVariables doubles per element.
std::vector<std::int64_t> doubles_of(std::span<const std::int64_t> elements) {
  std::vector<std::int64_t> out;
  for (std::int64_t e : elements) {
    for (int k = 0; k < kVariables; ++k) out.push_back(e * kVariables + k);
  }
  return out;
}

}  // namespace

int run_xsm_version(Options& command_line, const char* version, ValueSharing sharing) {
  const RunOptions options = read_run_options(command_line, true, static_cast<std::size_t>(squall::nodes()));
  const Mesh mesh = generate_mesh(shape_for_nodes(options.nodes), options.seed);
  const FlowParameters parameters;
  const int me = squall::node();

  PhaseTimer phases;
  const MeshPartition part = [&] {
    auto scope = phases.time("partition");
    return partition_mesh(mesh);
  }();
  const BlockRenaming names(part.table, options.block_size);
  const ElementLists lists = element_lists(mesh, part, names, parameters);
  const auto first = static_cast<std::size_t>(names.first(me));
  const auto owned = static_cast<std::size_t>(part.table.local_size());
  const auto length = static_cast<std::size_t>(names.length());
  std::vector<Vec3> owned_coords;  // in element order: the table's owned order
  for (std::int64_t g : part.table.owned()) owned_coords.push_back(mesh.coords[static_cast<std::size_t>(g)]);

  // The shared arrays: node weights (once) and residuals under direct-reduction, values under
  // `sharing`, all homed by the renaming.
  const tsm::options per_double{.block_size = options.block_size, .homes = names.homes(sizeof(double))};
  const tsm::options per_node{.block_size = options.block_size, .homes = names.homes(sizeof(NodeValues))};
  xsm::direct_reduction<double> weight_reduction;
  // A node's residuals are reduced as one element, so the reduction moves and adds whole
  // records, as CHAOS's scatter does, rather than kVariables doubles one by one.
  xsm::direct_reduction<NodeValues, AddValues> residual_reduction(AddValues{}, NodeValues{});
  double* weight_array = xsm::alloc<double>(length, weight_reduction, per_double);
  NodeValues* residual_array = xsm::alloc<NodeValues>(length, residual_reduction, per_node);
  std::unique_ptr<xsm::protocol> value_protocol;
  if (sharing == ValueSharing::block_update) value_protocol = std::make_unique<xsm::block_update>(3);
  if (sharing == ValueSharing::node_update) {
    // Every iteration rewrites every node's values: push them at each barrier without tracking
    // which blocks were written.
    value_protocol = std::make_unique<xsm::node_update>(sizeof(double), xsm::node_update::push_policy::every_phase);
  }
  double* value_array = value_protocol ? xsm::alloc<double>(length * kVariables, *value_protocol, per_node)
                                       : tsm::alloc<double>(length * kVariables, per_node);
  const std::span<double> node_weight_all(weight_array, length);
  // The residuals are addressed BlockRenaming::kRoom elements (about half a page) into their
  // array. Both arrays start on a page, so residual[i] and values[i] would otherwise share the
  // low 12 bits of their addresses, and the edge loop's loads of values behind its stores to
  // residuals waited as if on the same address (4K aliasing): 4% of its time, measured on heap
  // copies of the arrays at both offsets. A shift of one element left residual[i] beside
  // values[i + 1], which cost 1.7%; half a page puts the partners 51 elements apart.
  const std::span<NodeValues> residual(residual_array + BlockRenaming::kRoom, length - BlockRenaming::kRoom);
  const std::span<NodeValues> values(reinterpret_cast<NodeValues*>(value_array), length);
  const std::span<NodeValues> my_values = values.subspan(first, owned);
  const std::span<NodeValues> my_residual = residual.subspan(first, owned);

  CountedRegion region;
  std::vector<double> node_weight;
  {
    auto scope = phases.time("node weights");
    weight_reduction.inspect(lists.touched);
    accumulate_edge_node_weights(lists.edges, lists.edge_weights, node_weight_all);
    accumulate_face_node_weights(lists.faces, lists.face_weights, node_weight_all);
    weight_reduction.end_phase();
    node_weight.assign(weight_array + first, weight_array + first + owned);
  }
  {
    auto scope = phases.time("inspector");
    std::vector<std::int64_t> touched_residuals(lists.touched);  // positions in residual_array
    for (std::int64_t& e : touched_residuals) e += BlockRenaming::kRoom;
    residual_reduction.inspect(touched_residuals);
    initial_values(owned_coords, my_values);
    if (sharing == ValueSharing::node_update) {
      std::vector<std::int64_t> read;  // others' elements
      for (std::int64_t e : lists.touched) {
        if (e < names.first(me) || e >= names.first(me) + static_cast<std::int64_t>(owned)) read.push_back(e);
      }
      static_cast<xsm::node_update&>(*value_protocol).declare_reads(doubles_of(read));
    }
    tsm::barrier();  // the initial values are everybody's
  }
  for (std::size_t i = 0; i < options.iterations; ++i) {
    {
      auto scope = phases.time("node loops");
      reset_residuals(my_residual);
    }
    {
      auto scope = phases.time("edge loop");
      accumulate_edge_fluxes(lists.edges, lists.edge_weights, values, residual);
    }
    {
      auto scope = phases.time("face loop");
      accumulate_face_fluxes(lists.faces, lists.face_weights, parameters.free_stream, values, residual);
    }
    {
      auto scope = phases.time("reduction");
      residual_reduction.end_phase();  // every node's contributions to this node's residuals are in
      // Every node must be done reading this iteration's values before their homes write the
      // next ones: under stache a home's write would reach a reader in the middle of its loop,
      // and under block-update a reader's miss while recording fetches the home's block as it
      // is. Under node-update every value read from another node is declared, so it is read
      // from a copy that changes only in this node's own update below: no barrier here.
      if (sharing != ValueSharing::node_update) tsm::barrier();
    }
    {
      auto scope = phases.time("node loops");
      update_values(my_residual, std::span<const double>(node_weight), my_values);
    }
    {
      auto scope = phases.time("update");
      // The new values reach their readers: at a barrier, or under node-update by its own
      // collective phase end, which like a CHAOS gather waits only for the pushes to this node.
      if (sharing == ValueSharing::node_update) {
        static_cast<xsm::node_update&>(*value_protocol).end_phase();
      } else {
        tsm::barrier();
      }
    }
  }
  region.end();

  // The protocols' own counts (whole run): direct-reduction's messages, and the update
  // protocols' misses and pushed messages.
  double protocol_misses = 0, protocol_pushes = 0;
  if (sharing == ValueSharing::block_update) {
    const auto& upd = static_cast<const xsm::block_update&>(*value_protocol);
    protocol_misses = static_cast<double>(upd.misses.value());
    protocol_pushes = static_cast<double>(upd.push_messages.value());
  }
  if (sharing == ValueSharing::node_update) {
    const auto& upd = static_cast<const xsm::node_update&>(*value_protocol);
    protocol_misses = static_cast<double>(upd.misses.value());
    protocol_pushes = static_cast<double>(upd.push_messages.value());
  }
  protocol_misses = squall::allreduce(protocol_misses);
  protocol_pushes = squall::allreduce(protocol_pushes);
  const double reduction_messages = squall::allreduce(static_cast<double>(residual_reduction.messages.value()));
  const std::vector<NodeValues> final_values(my_values.begin(), my_values.end());
  const double cut = part.cut_edges_pct;
  xsm::free(value_array);
  xsm::free(residual_array);
  xsm::free(weight_array);
  const std::vector<std::int64_t> mesh_names(part.table.owned().begin(), part.table.owned().end());
  const ParallelRun report{version, final_values, mesh_names, &region, &phases, cut};
  return report_parallel_run(mesh, options, report, [&](Figures& figures) {
    figures.add("block_size", static_cast<std::int64_t>(options.block_size));
    figures.add("shared_elements", static_cast<std::int64_t>(length));
    figures.add("reduction_messages", reduction_messages);
    figures.add("update_misses", protocol_misses);
    figures.add("update_push_messages", protocol_pushes);
  });
}

}  // namespace squall::apps::unstructured
