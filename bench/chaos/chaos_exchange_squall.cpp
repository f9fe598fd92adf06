// SPDX-License-Identifier: BSD-3-Clause
// chaos_exchange_squall: the Squall half of the chaos_exchange benchmark (run under squallrun;
// bench/chaos/chaos_exchange runs it beside chaos_exchange_mpi).
//
// Partitions the paper's unstructured mesh with chaos::rcb, gives each edge to a node by the
// paper's rule (almost-owner-computes: a cut edge goes to the less loaded side), inspects the
// edge loop's two indirection arrays, checks that gather and scatter_op move the right values,
// and times chaos::gather and chaos::scatter_op(add) of the flow kernel's five doubles per
// mesh node. With --partition FILE it writes the partition for chaos_exchange_mpi.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <span>
#include <string>
#include <vector>

#include <squall/chaos/partition.hpp>
#include <squall/chaos/remap.hpp>
#include <squall/chaos/schedule.hpp>
#include <squall/chaos/translation_table.hpp>
#include <squall/squall.hpp>

#include "batch_timer.hpp"
#include "common/report.hpp"
#include "exchange_input.hpp"
#include "exchange_options.hpp"
#include "partition_file.hpp"
#include "partitioned_mesh.hpp"
#include "squall/apps/unstructured/block_cut.hpp"

namespace {

namespace chaos = squall::chaos;
namespace cx = squall::bench::chaos_exchange;
using chaos::index;
using cx::edge_item;
using cx::initial_block;

constexpr const char* kUsage =
    "usage: squallrun -n N chaos_exchange_squall [--json] [--partition FILE] [--mesh-nodes M]\n"
    "                 [--seed S] [--trials T] [--reps R]\n";

constexpr int kInspectorRuns = 5;
constexpr int kPaperParts = 32;  // the paper's cut-edge figures are for 32 processors

double cut_pct(const chaos::translation_table& table, std::span<const edge_item> edges) {
  std::vector<index> from, to;
  for (const edge_item& e : edges) {
    from.push_back(e.a);
    to.push_back(e.b);
  }
  return 100.0 * chaos::cut_edges(table, from, to).fraction();
}

// The paper's figure: % of edges RCB into 32 parts cuts (every node holds the whole mesh).
double rcb32_cut_pct(const initial_block& b, const cx::mesh::Mesh& m) {
  const chaos::partition_result r = chaos::rcb(b.coords, 3, {}, kPaperParts);
  // The block table owns contiguous ascending runs in node order, so the concatenation of
  // every node's parts is in global order.
  const std::vector<int> part = chaos::allgather(std::span<const int>(r.owner));
  std::size_t cut = 0;
  for (const auto& e : m.edges) cut += part[e.a] != part[e.b];
  return 100.0 * static_cast<double>(cut) / static_cast<double>(m.edges.size());
}

// Slowest node of each run, median over runs.
double median_of_slowest(std::vector<double> per_run) {
  squall::allreduce(std::span<const double>(per_run), std::span<double>(per_run), squall::op::max{});
  return squall::bench::median(per_run);
}

struct inspected {
  chaos::schedule schedule;
  std::vector<index> a, b;  // the edges' ends as local offsets (owned, or ghost slots)
  double inspector_ms = 0;
};

// Runs the inspector kInspectorRuns times on fresh copies of the global ends; keeps the last.
inspected inspect_edges(const chaos::translation_table& table, std::span<const edge_item> edges) {
  inspected out;
  std::vector<double> ms;
  for (int run = 0; run < kInspectorRuns; ++run) {
    out.a.clear();
    out.b.clear();
    for (const edge_item& e : edges) {
      out.a.push_back(e.a);
      out.b.push_back(e.b);
    }
    squall::barrier();
    const auto t0 = std::chrono::steady_clock::now();
    out.schedule = chaos::inspect(table, {std::span<index>(out.a), std::span<index>(out.b)});
    ms.push_back(squall::bench::seconds_since(t0) * 1e3);
  }
  out.inspector_ms = median_of_slowest(ms);
  return out;
}

// Gathers into x (owned part filled) and checks every ghost an edge reads. Returns mismatches.
index check_gather(const inspected& in, std::span<const edge_item> edges, std::vector<cx::node_values>& x) {
  chaos::gather(in.schedule, std::span<cx::node_values>(x));
  index bad = 0;
  for (std::size_t e = 0; e < edges.size(); ++e) {
    bad += !(x[static_cast<std::size_t>(in.a[e])] == cx::owner_value(edges[e].a));
    bad += !(x[static_cast<std::size_t>(in.b[e])] == cx::owner_value(edges[e].b));
  }
  return bad;
}

// Runs the edge loop's reduction (each edge adds into both ends), combines the ghosts into
// their owners and checks every owner against its degree. Returns mismatches.
index check_scatter_add(const inspected& in, const chaos::translation_table& table,
                        const std::vector<index>& degree, std::vector<cx::node_values>& y) {
  std::fill(y.begin(), y.end(), cx::node_values{});
  for (std::size_t e = 0; e < in.a.size(); ++e) {
    y[static_cast<std::size_t>(in.a[e])] = y[static_cast<std::size_t>(in.a[e])] + cx::edge_contribution();
    y[static_cast<std::size_t>(in.b[e])] = y[static_cast<std::size_t>(in.b[e])] + cx::edge_contribution();
  }
  chaos::scatter_op(in.schedule, std::span<cx::node_values>(y), chaos::combine::add{});
  index bad = 0;
  const auto owned = table.owned();
  for (std::size_t i = 0; i < owned.size(); ++i) {
    bad += !(y[i] == cx::expected_sum(degree[static_cast<std::size_t>(owned[i])]));
  }
  return bad;
}

// Node 0 writes who owns each mesh node and runs each edge.
void save_partition(const std::string& path, const cx::mesh_input& input, const chaos::translation_table& table,
                     std::span<const edge_item> mine) {
  const index my_nodes = table.local_size(), my_edges = static_cast<index>(mine.size());
  std::vector<index> edge_ids;
  for (const edge_item& e : mine) edge_ids.push_back(e.id);
  const auto node_counts = chaos::allgather(std::span<const index>(&my_nodes, 1));
  const auto edge_counts = chaos::allgather(std::span<const index>(&my_edges, 1));
  const auto nodes = chaos::allgather(table.owned());
  const auto edges = chaos::allgather(std::span<const index>(edge_ids));
  if (squall::node() != 0) return;

  cx::partition p;
  p.shape = input.shape;
  p.seed = input.seed;
  p.parts = squall::nodes();
  p.node_owner.assign(input.mesh.node_count(), -1);
  p.edge_owner.assign(input.mesh.edges.size(), -1);
  std::size_t at_node = 0, at_edge = 0;
  for (int owner = 0; owner < p.parts; ++owner) {
    for (index i = 0; i < node_counts[owner]; ++i) p.node_owner[static_cast<std::size_t>(nodes[at_node++])] = owner;
    for (index i = 0; i < edge_counts[owner]; ++i) p.edge_owner[static_cast<std::size_t>(edges[at_edge++])] = owner;
  }
  cx::write_partition(path, p);
}

int run(const cx::options& o) {
  const int me = squall::node();
  const cx::mesh_input input = cx::make_mesh(cx::mesh::shape_for_nodes(o.mesh_nodes), o.seed);
  const cx::mesh::Mesh& m = input.mesh;

  // Partition the nodes by RCB on their coordinates, starting from a block of names each.
  const initial_block block = cx::take_block(m);
  const chaos::partition_result rcb = chaos::rcb(block.coords, 3);
  const chaos::translation_table table(chaos::owned_after(block.table, rcb.owner),
                                       static_cast<index>(m.node_count()));

  // The owners' values, made in the block layout and moved by remap (which the check tests).
  std::vector<cx::node_values> initial;
  for (index g : block.table.owned()) initial.push_back(cx::owner_value(g));
  const chaos::remap_plan to_rcb(block.table, table);
  const std::vector<cx::node_values> owned_values = to_rcb.apply(std::span<const cx::node_values>(initial));

  const std::vector<edge_item> mine = cx::assign_edges(table, block.edges);
  const double cut_rcb = cut_pct(table, block.edges), cut_block = cut_pct(block.table, block.edges);
  const double cut_rcb32 = rcb32_cut_pct(block, m);
  const double cut_block32 = cx::mesh::block_cut_percent(m, kPaperParts);

  const inspected in = inspect_edges(table, mine);
  const auto slots = static_cast<std::size_t>(in.schedule.ghost_end());
  std::vector<cx::node_values> x(slots, cx::owner_value(-1)), y(slots);
  std::copy(owned_values.begin(), owned_values.end(), x.begin());

  const std::vector<index> degree = cx::node_degrees(m);
  index bad = check_gather(in, mine, x);
  bad += check_scatter_add(in, table, degree, y);
  bad = squall::allreduce(bad);
  if (bad != 0) {
    if (me == 0) {
      std::fprintf(stderr, "chaos_exchange_squall: %lld values moved wrongly\n", static_cast<long long>(bad));
    }
    return 1;
  }

  const auto sync = [] { squall::barrier(); };
  const double gather_us = median_of_slowest(cx::time_batches(
      o.plan, sync, [&] { chaos::gather(in.schedule, std::span<cx::node_values>(x)); }));
  const double scatter_us = median_of_slowest(cx::time_batches(o.plan, sync, [&] {
    chaos::scatter_op(in.schedule, std::span<cx::node_values>(y), chaos::combine::add{});
  }));

  if (!o.partition.empty()) save_partition(o.partition, input, table, mine);

  const chaos::schedule_figures f = in.schedule.figures();
  const index ghosts = squall::allreduce(f.elements_received);
  const index messages = squall::allreduce(static_cast<index>(f.peers_sent_to));
  const index max_edges = squall::allreduce(static_cast<index>(mine.size()), squall::op::max{});
  if (me != 0) return 0;
  squall::bench::figures out;
  out.add("nodes", squall::nodes());
  out.add("mesh_nodes", static_cast<double>(m.node_count()));
  out.add("mesh_edges", static_cast<double>(m.edges.size()));
  out.add("doubles_per_node", cx::mesh::kVariables);
  out.add("gather_us", gather_us);
  out.add("scatter_add_us", scatter_us);
  out.add("inspector_ms", in.inspector_ms);
  out.add("cut_edges_rcb_pct", cut_rcb);
  out.add("cut_edges_block_pct", cut_block);
  out.add("cut_edges_rcb32_pct", cut_rcb32);
  out.add("cut_edges_block32_pct", cut_block32);
  out.add("ghosts", static_cast<double>(ghosts));
  out.add("messages", static_cast<double>(messages));
  out.add("rcb_imbalance", rcb.quality.imbalance);
  out.add("edge_imbalance", static_cast<double>(max_edges) * squall::nodes() / static_cast<double>(m.edges.size()));
  char title[160];
  std::snprintf(title, sizeof title,
                "chaos_exchange_squall: gather / scatter_op(add) of %d doubles per node, %d nodes "
                "(median of %d x %d, slowest node)",
                cx::mesh::kVariables, squall::nodes(), o.plan.trials, o.plan.reps);
  out.print(title, o.json);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  cx::options o;
  try {
    o = cx::parse_options(argc, argv, kUsage);
  } catch (const std::invalid_argument& e) {  // every node parses the same arguments
    if (squall::node() == 0) std::fprintf(stderr, "chaos_exchange_squall: %s\n", e.what());
    return 2;
  }
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chaos_exchange_squall (node %d): %s\n", squall::node(), e.what());
    return 1;
  }
}
