// SPDX-License-Identifier: BSD-3-Clause
// unstructured_mpi: the message-passing reference of unstructured (section 5.1), plain Open
// MPI, run under mpirun. The partition is serial_partition's (chaos::rcb's rule, computed on
// every rank from the whole mesh); the lists are computed once by a hand-written inspector
// with the whole owner map at hand; each iteration receives the ghost nodes' values from their
// owners and sends the ghost residuals back to be added (MPI_Irecv/MPI_Isend to the
// neighbours only, one message per pair and direction; the node weights once, the same way).
#include <mpi.h>

#include <algorithm>
#include <array>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <span>
#include <vector>

#include "squall/apps/figures.hpp"
#include "squall/apps/options.hpp"
#include "squall/apps/phase_timer.hpp"
#include "squall/apps/run_report.hpp"
#include "squall/apps/unstructured/block_cut.hpp"
#include "squall/apps/unstructured/mesh_generator.hpp"
#include "squall/apps/unstructured/reference_check.hpp"
#include "squall/apps/unstructured/run_options.hpp"
#include "squall/apps/unstructured/serial_partition.hpp"

namespace {

using namespace squall::apps;
using namespace squall::apps::unstructured;

constexpr const char* kUsage =
    "usage: mpirun -n N unstructured_mpi [--nodes N] [--iterations I] [--seed S] [--parts P] [--json]\n"
    "  the options of unstructured_seq (--parts: the blocks of the block_cut_pct it reports)\n";

int rank_of(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}
int size_of(MPI_Comm comm) {
  int n = 0;
  MPI_Comm_size(comm, &n);
  return n;
}

// This rank's part of the mesh in local numbering (owned nodes ascending by name, then the
// ghosts grouped by owner rank), and what it exchanges with each peer.
class LocalMesh {
 public:
  LocalMesh(const Mesh& mesh, const SerialPartition& part, int me, int ranks) : recv_first_(ranks + 1, 0), send_(ranks) {
    std::vector<std::int64_t> local(mesh.node_count(), -1);
    for (NodeId g = 0; g < mesh.node_count(); ++g) {
      if (part.node_owner[g] == me) {
        local[g] = static_cast<std::int64_t>(owned_.size());
        owned_.push_back(g);
      }
    }
    // Ghosts: the others' nodes this rank's items name; sends: this rank's nodes others' items name.
    std::vector<std::vector<NodeId>> ghosts(static_cast<std::size_t>(ranks));
    auto note = [&](std::int32_t runner, NodeId g) {
      const std::int32_t owner = part.node_owner[g];
      if (runner == me && owner != me) ghosts[static_cast<std::size_t>(owner)].push_back(g);
      if (runner != me && owner == me) send_[static_cast<std::size_t>(runner)].push_back(g);
    };
    for (std::size_t e = 0; e < mesh.edges.size(); ++e) {
      note(part.edge_owner[e], mesh.edges[e].a);
      note(part.edge_owner[e], mesh.edges[e].b);
    }
    for (std::size_t f = 0; f < mesh.faces.size(); ++f) {
      for (NodeId g : mesh.faces[f].nodes) note(part.face_owner[f], g);
    }
    std::int64_t next = static_cast<std::int64_t>(owned_.size());
    for (int p = 0; p < ranks; ++p) {
      auto& list = ghosts[static_cast<std::size_t>(p)];
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
      recv_first_[static_cast<std::size_t>(p)] = next;
      for (NodeId g : list) local[g] = next++;
      auto& out = send_[static_cast<std::size_t>(p)];
      std::sort(out.begin(), out.end());
      out.erase(std::unique(out.begin(), out.end()), out.end());
      for (NodeId& g : out) g = static_cast<NodeId>(local[g]);  // now a local offset
    }
    recv_first_.back() = next;
    auto to_local = [&](NodeId g) { return static_cast<NodeId>(local[g]); };
    for (std::size_t e = 0; e < mesh.edges.size(); ++e) {
      if (part.edge_owner[e] != me) continue;
      global_edges_.push_back(mesh.edges[e]);
      edges_.push_back({to_local(mesh.edges[e].a), to_local(mesh.edges[e].b)});
    }
    for (std::size_t f = 0; f < mesh.faces.size(); ++f) {
      if (part.face_owner[f] != me) continue;
      global_faces_.push_back(mesh.faces[f]);
      const auto& n = mesh.faces[f].nodes;
      faces_.push_back({{to_local(n[0]), to_local(n[1]), to_local(n[2])}});
    }
  }

  std::size_t owned() const { return owned_.size(); }
  std::size_t slots() const { return static_cast<std::size_t>(recv_first_.back()); }
  const std::vector<NodeId>& owned_names() const { return owned_; }
  const std::vector<Edge>& edges() const { return edges_; }
  const std::vector<Face>& faces() const { return faces_; }
  const std::vector<Edge>& global_edges() const { return global_edges_; }
  const std::vector<Face>& global_faces() const { return global_faces_; }
  std::size_t ghosts_from(int p) const { return static_cast<std::size_t>(recv_first_[p + 1] - recv_first_[p]); }
  std::size_t ghost_first(int p) const { return static_cast<std::size_t>(recv_first_[p]); }
  const std::vector<NodeId>& sent_to(int p) const { return send_[static_cast<std::size_t>(p)]; }

 private:
  std::vector<NodeId> owned_;
  std::vector<std::int64_t> recv_first_;    // per rank: first ghost slot of its nodes; then the end
  std::vector<std::vector<NodeId>> send_;   // per rank: local offsets of the owned nodes it reads
  std::vector<Edge> edges_, global_edges_;
  std::vector<Face> faces_, global_faces_;
};

// The exchange of `Width` doubles per node with the neighbours, counting what it sends.
class Exchange {
 public:
  Exchange(const LocalMesh& local, MPI_Comm comm) : local_(local), comm_(comm), ranks_(size_of(comm)), me_(rank_of(comm)) {}

  // Owners' values into the ghost slots.
  template <std::size_t Width>
  void gather(std::span<std::array<double, Width>> data) {
    requests_.clear();
    for (int p = 0; p < ranks_; ++p) {
      if (p == me_ || local_.ghosts_from(p) == 0) continue;
      requests_.emplace_back();
      MPI_Irecv(data[local_.ghost_first(p)].data(), static_cast<int>(local_.ghosts_from(p) * Width), MPI_DOUBLE, p, 0,
                comm_, &requests_.back());
    }
    pack<Width>(std::span<const std::array<double, Width>>(data.data(), data.size()));
    for (int p = 0; p < ranks_; ++p) send(p, buffers_[static_cast<std::size_t>(p)], 0);
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  }

  // Ghost slots added into their owners, peers in rank order.
  template <std::size_t Width>
  void scatter_add(std::span<std::array<double, Width>> data) {
    requests_.clear();
    buffers_.resize(static_cast<std::size_t>(ranks_));
    for (int p = 0; p < ranks_; ++p) {
      auto& in = buffers_[static_cast<std::size_t>(p)];
      in.resize(p == me_ ? 0 : local_.sent_to(p).size() * Width);
      if (in.empty()) continue;
      requests_.emplace_back();
      MPI_Irecv(in.data(), static_cast<int>(in.size()), MPI_DOUBLE, p, 1, comm_, &requests_.back());
    }
    for (int p = 0; p < ranks_; ++p) {
      if (p == me_ || local_.ghosts_from(p) == 0) continue;
      const std::span<const double> out(data[local_.ghost_first(p)].data(), local_.ghosts_from(p) * Width);
      send(p, out, 1);
    }
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    for (int p = 0; p < ranks_; ++p) {
      if (p == me_) continue;
      const auto& in = buffers_[static_cast<std::size_t>(p)];
      const auto& where = local_.sent_to(p);
      for (std::size_t i = 0; i < where.size(); ++i) {
        for (std::size_t k = 0; k < Width; ++k) data[where[i]][k] += in[i * Width + k];
      }
    }
  }

  double messages = 0, bytes = 0;

 private:
  template <std::size_t Width>
  void pack(std::span<const std::array<double, Width>> data) {
    buffers_.resize(static_cast<std::size_t>(ranks_));
    for (int p = 0; p < ranks_; ++p) {
      auto& out = buffers_[static_cast<std::size_t>(p)];
      out.clear();
      if (p == me_) continue;
      for (NodeId i : local_.sent_to(p)) out.insert(out.end(), data[i].begin(), data[i].end());
    }
  }
  void send(int p, std::span<const double> out, int tag) {
    if (p == me_ || out.empty()) return;
    requests_.emplace_back();
    MPI_Isend(out.data(), static_cast<int>(out.size()), MPI_DOUBLE, p, tag, comm_, &requests_.back());
    messages += 1;
    bytes += static_cast<double>(out.size_bytes());
  }

  const LocalMesh& local_;
  MPI_Comm comm_;
  int ranks_, me_;
  std::vector<std::vector<double>> buffers_;
  std::vector<MPI_Request> requests_;
};

double max_over_ranks(double mine) {
  double out = 0;
  MPI_Allreduce(&mine, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}
double sum_over_ranks(double mine) {
  double out = 0;
  MPI_Allreduce(&mine, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return out;
}

// Every rank's owned values, by name, on rank 0 (empty elsewhere).
std::vector<NodeValues> gather_by_name(const LocalMesh& local, std::span<const NodeValues> owned, std::size_t nodes) {
  const int me = rank_of(MPI_COMM_WORLD), ranks = size_of(MPI_COMM_WORLD);
  const int mine = static_cast<int>(local.owned());
  std::vector<int> counts(static_cast<std::size_t>(ranks)), displs(static_cast<std::size_t>(ranks), 0);
  MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (int p = 1; p < ranks; ++p) displs[static_cast<std::size_t>(p)] = displs[static_cast<std::size_t>(p) - 1] + counts[static_cast<std::size_t>(p) - 1];
  std::vector<NodeId> names(me == 0 ? nodes : 0);
  std::vector<NodeValues> values(me == 0 ? nodes : 0);
  MPI_Gatherv(local.owned_names().data(), mine, MPI_UINT32_T, names.data(), counts.data(), displs.data(), MPI_UINT32_T, 0,
              MPI_COMM_WORLD);
  MPI_Datatype node;
  MPI_Type_contiguous(kVariables, MPI_DOUBLE, &node);
  MPI_Type_commit(&node);
  MPI_Gatherv(owned.data(), mine, node, values.data(), counts.data(), displs.data(), node, 0, MPI_COMM_WORLD);
  MPI_Type_free(&node);
  std::vector<NodeValues> by_name(values.size());
  for (std::size_t i = 0; i < names.size(); ++i) by_name[names[i]] = values[i];
  return by_name;
}

int run(Options& command_line) {
  const int me = rank_of(MPI_COMM_WORLD), ranks = size_of(MPI_COMM_WORLD);
  const RunOptions options = read_run_options(command_line, false, static_cast<std::size_t>(ranks));
  const Mesh mesh = generate_mesh(shape_for_nodes(options.nodes), options.seed);
  const FlowParameters parameters;

  PhaseTimer phases;
  SerialPartition part;
  {
    auto scope = phases.time("partition");
    part = serial_partition(mesh, ranks);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  std::optional<LocalMesh> local;
  {
    auto scope = phases.time("inspector");
    local.emplace(mesh, part, me, ranks);
  }
  Exchange exchange(*local, MPI_COMM_WORLD);
  const std::size_t owned = local->owned();
  std::vector<EdgeWeights> edge_weights(local->edges().size());
  std::vector<double> face_weights(local->faces().size());
  std::vector<std::array<double, 1>> node_weight(local->slots());
  std::vector<double> weight(local->slots(), 0.0);
  std::vector<NodeValues> values(local->slots()), residual(local->slots());
  {
    auto scope = phases.time("node weights");
    compute_edge_weights(local->global_edges(), mesh.coords, parameters, edge_weights);
    compute_face_weights(local->global_faces(), mesh.coords, parameters, face_weights);
    accumulate_edge_node_weights(local->edges(), edge_weights, weight);
    accumulate_face_node_weights(local->faces(), face_weights, weight);
    for (std::size_t i = 0; i < weight.size(); ++i) node_weight[i][0] = weight[i];
    exchange.scatter_add(std::span<std::array<double, 1>>(node_weight));
    for (std::size_t i = 0; i < owned; ++i) weight[i] = node_weight[i][0];
    std::vector<Vec3> coords;
    for (NodeId g : local->owned_names()) coords.push_back(mesh.coords[g]);
    initial_values(coords, std::span<NodeValues>(values.data(), owned));
  }
  for (std::size_t i = 0; i < options.iterations; ++i) {
    {
      auto scope = phases.time("gather");
      exchange.gather(std::span<NodeValues>(values));
    }
    {
      auto scope = phases.time("node loops");
      reset_residuals(residual);
    }
    {
      auto scope = phases.time("edge loop");
      accumulate_edge_fluxes(local->edges(), edge_weights, values, residual);
    }
    {
      auto scope = phases.time("face loop");
      accumulate_face_fluxes(local->faces(), face_weights, parameters.free_stream, values, residual);
    }
    {
      auto scope = phases.time("scatter");
      exchange.scatter_add(std::span<NodeValues>(residual));
    }
    {
      auto scope = phases.time("node loops");
      update_values(std::span<const NodeValues>(residual.data(), owned), std::span<const double>(weight.data(), owned),
                    std::span<NodeValues>(values.data(), owned));
    }
  }
  const double seconds = max_over_ranks(MPI_Wtime() - start);
  RunCounts counts;
  counts.messages = sum_over_ranks(exchange.messages);
  counts.bytes = sum_over_ranks(exchange.bytes);
  std::vector<std::pair<std::string, double>> slowest;
  for (const auto& [phase, s] : phases.phases()) slowest.emplace_back(phase, max_over_ranks(s));
  const std::vector<NodeValues> by_name = gather_by_name(*local, std::span<const NodeValues>(values.data(), owned), mesh.node_count());
  if (me != 0) return 0;

  const ReferenceCheck check = check_against_reference(mesh, options.iterations, by_name);
  Figures figures;
  add_run_figures(figures, {"unstructured", "mpi", ranks, seconds, counts, check.ok, check.reference_seconds});
  for (auto [phase, s] : slowest) {
    std::replace(phase.begin(), phase.end(), ' ', '_');
    figures.add("phase_" + phase + "_s", s);
  }
  figures.add("mesh_nodes", static_cast<std::int64_t>(mesh.node_count()));
  figures.add("edges", static_cast<std::int64_t>(mesh.edges.size()));
  figures.add("faces", static_cast<std::int64_t>(mesh.faces.size()));
  figures.add("iterations", static_cast<std::int64_t>(options.iterations));
  figures.add("cut_edges_pct", part.cut_edges_pct);
  figures.add("block_parts", static_cast<std::int64_t>(options.parts));
  figures.add("block_cut_pct", block_cut_percent(mesh, options.parts));
  add_check_figures(figures, check);
  figures.print_lines(std::cout);
  if (options.json) figures.print_json(std::cout);
  if (!check.ok) std::cerr << "unstructured_mpi: the result differs from the sequential reference\n";
  return check.ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int status = run_program(argc, argv, "unstructured_mpi", kUsage, run);
  MPI_Finalize();
  return status;
}
