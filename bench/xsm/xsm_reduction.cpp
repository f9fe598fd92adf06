// SPDX-License-Identifier: BSD-3-Clause
// xsm_reduction: the edge reduction of the unstructured mesh (paper size, RCB partition, edges
// by the paper's rule) done four ways in one run, each rep being the edge loop (every edge
// adds the flow kernel's five doubles into both ends) and the combination into the owners:
//
//   tsm     stache, TSM-reduction: contributions into a private array, then the shared array
//           cut into the nodes' pieces, each node adding its contributions to one piece per
//           step, the pieces rotating among the nodes, a barrier after each of the N steps;
//   direct  xsm::direct_reduction: stores straight into the shared array (owned elements in
//           place, others into accumulators), then end_phase;
//   bulk    xsm::bulk_reduction: contributions into a private array (as tsm), then the pieces
//           rotating among the nodes over channels (the array seen as doubles: an element
//           size must divide the block size);
//   chaos   chaos::scatter_op(add) on a CHAOS schedule (ghost slots zeroed each rep).
//
// For the shared arrays the mesh nodes are renamed so that each node's RCB part is a run of
// whole blocks (homes by a function). Each way is checked once against every owner's degree.
// Messages and bytes: every active message of one steady-state rep, summed over the nodes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <squall/chaos/partition.hpp>
#include <squall/chaos/remap.hpp>
#include <squall/chaos/schedule.hpp>
#include <squall/chaos/translation_table.hpp>
#include <squall/squall.hpp>
#include <squall/stats.hpp>
#include <squall/tsm.hpp>
#include <squall/xsm.hpp>
#include <squall/xsm/bulk_reduction.hpp>
#include <squall/xsm/direct_reduction.hpp>

#include "batch_timer.hpp"
#include "common/report.hpp"
#include "exchange_input.hpp"
#include "exchange_options.hpp"
#include "partitioned_mesh.hpp"

namespace {

namespace chaos = squall::chaos;
namespace cx = squall::bench::chaos_exchange;
namespace tsm = squall::tsm;
namespace xsm = squall::xsm;
using chaos::index;
using cx::node_values;

constexpr const char* kUsage = "usage: squallrun -n N xsm_reduction [--json] [--mesh-nodes M] [--seed S] [--trials T] [--reps R]\n";
constexpr std::size_t kBlock = 4096;
constexpr std::size_t kPerRun = 512;  // elements making whole 4 KiB blocks (512 * 40 = 5 blocks)

// The shared arrays' numbering: node p's RCB part is elements [first[p], first[p] + count[p]),
// first[p] a multiple of kPerRun, so each node's elements fill whole blocks of its own.
struct renaming {
  std::vector<index> name;   // global mesh node -> element
  std::vector<index> first;  // per node, and first[nodes] = the array's length
  int home_of(squall::memory::block_index b) const {
    const auto element = static_cast<index>(b * kBlock / sizeof(node_values));
    return static_cast<int>(std::upper_bound(first.begin(), first.end(), element) - first.begin()) - 1;
  }
};

renaming rename(const chaos::translation_table& table, std::size_t mesh_nodes) {
  const int n = squall::nodes();
  const index mine = table.local_size();
  const std::vector<index> counts = chaos::allgather(std::span<const index>(&mine, 1));
  const std::vector<index> owned = chaos::allgather(table.owned());  // node order
  renaming r{std::vector<index>(mesh_nodes, -1), std::vector<index>(static_cast<std::size_t>(n) + 1, 0)};
  std::size_t at = 0;
  for (int p = 0; p < n; ++p) {
    const index base = r.first[static_cast<std::size_t>(p)];
    for (index k = 0; k < counts[static_cast<std::size_t>(p)]; ++k) r.name[static_cast<std::size_t>(owned[at++])] = base + k;
    const auto run = static_cast<index>(kPerRun);
    r.first[static_cast<std::size_t>(p) + 1] = base + (counts[static_cast<std::size_t>(p)] + run - 1) / run * run;
  }
  return r;
}

// Slowest node of each batch, median over batches.
double median_of_slowest(std::vector<double> per_batch) {
  squall::allreduce(std::span<const double>(per_batch), std::span<double>(per_batch), squall::op::max{});
  return squall::bench::median(per_batch);
}

struct traffic {
  double messages = 0, bytes = 0;
};

// Every active message `op` sends, summed over the nodes.
template <class Op>
traffic measure_traffic(Op op) {
  auto totals = [] {
    const squall::stats::snapshot s = squall::stats::take();
    std::uint64_t bytes = 0;
    for (const auto& h : s.handlers) bytes += h.sent_bytes;
    return std::pair{s.get("am.messages_sent"), bytes};
  };
  squall::barrier();
  const auto before = totals();
  op();
  const auto after = totals();
  const double m = static_cast<double>(after.first - before.first), b = static_cast<double>(after.second - before.second);
  squall::barrier();
  return {squall::allreduce(m), squall::allreduce(b)};
}

// Microseconds per rep of each way: the ways' batches interleaved (trial by trial, a batch of
// each in turn, the order rotated each trial so that no way always follows the same one and
// inherits its cache), so that a change in the machine's load falls on all of them alike;
// slowest node per batch, median over trials.
std::vector<double> time_interleaved(const cx::batch_plan& plan, const std::vector<std::function<void()>>& ways) {
  std::vector<std::vector<double>> us(ways.size());
  const cx::batch_plan one{1, plan.reps};
  for (int t = 0; t < plan.trials; ++t) {
    for (std::size_t k = 0; k < ways.size(); ++k) {
      const std::size_t w = (k + static_cast<std::size_t>(t)) % ways.size();
      us[w].push_back(cx::time_batches(one, [] { squall::barrier(); }, ways[w]).front());
    }
  }
  std::vector<double> out;
  for (auto& v : us) out.push_back(median_of_slowest(v));
  return out;
}

// Mismatches of the owners' elements (owner value = degree x contribution) after one rep from zero.
index check(std::span<const node_values> owned, std::span<const index> owned_globals, const std::vector<index>& degree) {
  index bad = 0;
  for (std::size_t i = 0; i < owned.size(); ++i) {
    bad += !(owned[i] == cx::expected_sum(degree[static_cast<std::size_t>(owned_globals[i])]));
  }
  return squall::allreduce(bad);
}

int run(const cx::options& o) {
  const int me = squall::node(), n = squall::nodes();
  const cx::mesh_input input = cx::make_mesh(cx::mesh::shape_for_nodes(o.mesh_nodes), o.seed);
  const cx::mesh::Mesh& m = input.mesh;
  const cx::initial_block block = cx::take_block(m);
  const chaos::partition_result rcb = chaos::rcb(block.coords, 3);
  const chaos::translation_table table(chaos::owned_after(block.table, rcb.owner), static_cast<index>(m.node_count()));
  const std::vector<cx::edge_item> mine = cx::assign_edges(table, block.edges);
  const std::vector<index> degree = cx::node_degrees(m);
  const node_values c = cx::edge_contribution();
  const std::vector<index> owned_globals(table.owned().begin(), table.owned().end());

  // The shared arrays' numbering and homes; the edges' ends in it; the elements touched.
  const renaming r = rename(table, m.node_count());
  std::vector<index> a, b, touched;
  for (const cx::edge_item& e : mine) {
    a.push_back(r.name[static_cast<std::size_t>(e.a)]);
    b.push_back(r.name[static_cast<std::size_t>(e.b)]);
  }
  touched = a;
  touched.insert(touched.end(), b.begin(), b.end());
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  const auto length = static_cast<std::size_t>(r.first.back());
  const tsm::options shared_opt{.block_size = kBlock,
                                .homes = squall::memory::home_policy::function([&r](auto blk) { return r.home_of(blk); })};
  const auto my_first = static_cast<std::size_t>(r.first[static_cast<std::size_t>(me)]);
  auto owned_of = [&](const node_values* y) { return std::span<const node_values>(y + my_first, owned_globals.size()); };
  // owned_globals[i] is this node's i-th RCB node, named my_first + i.
  index bad = 0;

  // (1) TSM-reduction.
  node_values* y_tsm = tsm::alloc<node_values>(length, shared_opt);
  std::vector<node_values> local(length);
  std::vector<std::size_t> piece_start(static_cast<std::size_t>(n) + 1);  // touched, cut by owner
  for (int p = 0; p <= n; ++p) {
    piece_start[static_cast<std::size_t>(p)] = static_cast<std::size_t>(
        std::lower_bound(touched.begin(), touched.end(), r.first[static_cast<std::size_t>(p)]) - touched.begin());
  }
  auto tsm_reduction = [&] {
    for (const index i : touched) local[static_cast<std::size_t>(i)] = node_values{};
    for (std::size_t e = 0; e < a.size(); ++e) {
      local[static_cast<std::size_t>(a[e])] = local[static_cast<std::size_t>(a[e])] + c;
      local[static_cast<std::size_t>(b[e])] = local[static_cast<std::size_t>(b[e])] + c;
    }
    for (int step = 0; step < n; ++step) {
      const auto piece = static_cast<std::size_t>((me + step) % n);
      for (std::size_t k = piece_start[piece]; k < piece_start[piece + 1]; ++k) {
        const auto i = static_cast<std::size_t>(touched[k]);
        y_tsm[i] = y_tsm[i] + local[i];
      }
      tsm::barrier();
    }
  };
  tsm_reduction();
  bad += check(owned_of(y_tsm), owned_globals, degree);

  // (2) direct-reduction.
  xsm::direct_reduction<node_values> red;
  node_values* y_direct = xsm::alloc<node_values>(length, red, shared_opt);
  red.inspect(touched);
  auto direct_reduction = [&] {
    for (std::size_t e = 0; e < a.size(); ++e) {
      y_direct[a[e]] = y_direct[a[e]] + c;
      y_direct[b[e]] = y_direct[b[e]] + c;
    }
    red.end_phase();
  };
  direct_reduction();
  bad += check(owned_of(y_direct), owned_globals, degree);

  // (3) bulk-reduction: this node's contributions (zero where it has none), reduced over
  // channels into the owners' blocks; node_values as its doubles.
  constexpr std::size_t doubles = sizeof(node_values) / sizeof(double);
  static_assert(sizeof(node_values) == doubles * sizeof(double));
  xsm::bulk_reduction bulk;
  double* y_bulk = xsm::alloc<double>(length * doubles, bulk, shared_opt);
  std::vector<node_values> contributions(length);
  auto bulk_reduction = [&] {
    for (const index i : touched) contributions[static_cast<std::size_t>(i)] = node_values{};
    for (std::size_t e = 0; e < a.size(); ++e) {
      contributions[static_cast<std::size_t>(a[e])] = contributions[static_cast<std::size_t>(a[e])] + c;
      contributions[static_cast<std::size_t>(b[e])] = contributions[static_cast<std::size_t>(b[e])] + c;
    }
    bulk.reduce(std::span<const double>(reinterpret_cast<const double*>(contributions.data()), length * doubles),
                squall::op::sum{});
  };
  bulk_reduction();
  bad += check(owned_of(reinterpret_cast<const node_values*>(y_bulk)), owned_globals, degree);

  // (4) chaos::scatter_op on the inspector's local numbering (owned first, then ghosts).
  std::vector<index> la, lb;
  for (const cx::edge_item& e : mine) {
    la.push_back(e.a);
    lb.push_back(e.b);
  }
  const chaos::schedule sched = chaos::inspect(table, {std::span<index>(la), std::span<index>(lb)});
  std::vector<node_values> y_chaos(static_cast<std::size_t>(sched.ghost_end()));
  const std::size_t owned_count = owned_globals.size();
  auto chaos_scatter = [&] {
    std::fill(y_chaos.begin() + static_cast<std::ptrdiff_t>(owned_count), y_chaos.end(), node_values{});
    for (std::size_t e = 0; e < la.size(); ++e) {
      y_chaos[static_cast<std::size_t>(la[e])] = y_chaos[static_cast<std::size_t>(la[e])] + c;
      y_chaos[static_cast<std::size_t>(lb[e])] = y_chaos[static_cast<std::size_t>(lb[e])] + c;
    }
    chaos::scatter_op(sched, std::span<node_values>(y_chaos), chaos::combine::add{});
  };
  chaos_scatter();
  bad += check(std::span<const node_values>(y_chaos.data(), owned_count), owned_globals, degree);

  if (bad != 0) {
    if (me == 0) std::fprintf(stderr, "xsm_reduction: %lld owner values wrong\n", static_cast<long long>(bad));
    return 1;
  }

  // The last two: the combination alone (no edge loop), to tell loop from exchange.
  const std::vector<double> us = time_interleaved(
      o.plan, {tsm_reduction, direct_reduction, chaos_scatter, [&] { red.end_phase(); },
               [&] { chaos::scatter_op(sched, std::span<node_values>(y_chaos), chaos::combine::add{}); }, bulk_reduction});
  const traffic tsm_traffic = measure_traffic(tsm_reduction), direct_traffic = measure_traffic(direct_reduction),
                chaos_traffic = measure_traffic(chaos_scatter), bulk_traffic = measure_traffic(bulk_reduction);
  const double direct_data_messages = squall::allreduce(static_cast<double>(red.messages.value()) /
                                                        static_cast<double>(red.phases.value()));
  const double cut = [&] {
    std::vector<index> from, to;
    for (const cx::edge_item& e : block.edges) {
      from.push_back(e.a);
      to.push_back(e.b);
    }
    return 100.0 * chaos::cut_edges(table, from, to).fraction();
  }();

  xsm::free(y_bulk);
  xsm::free(y_direct);
  tsm::free(y_tsm);
  if (me != 0) return 0;
  squall::bench::figures out;
  out.add("nodes", n);
  out.add("mesh_nodes", static_cast<double>(m.node_count()));
  out.add("mesh_edges", static_cast<double>(m.edges.size()));
  out.add("cut_edges_rcb_pct", cut);
  out.add("tsm_reduction_us", us[0]);
  out.add("direct_reduction_us", us[1]);
  out.add("bulk_reduction_us", us[5]);
  out.add("chaos_scatter_us", us[2]);
  out.add("direct_exchange_us", us[3]);
  out.add("chaos_exchange_us", us[4]);
  out.add("tsm_messages", tsm_traffic.messages);
  out.add("direct_messages", direct_traffic.messages);
  out.add("bulk_messages", bulk_traffic.messages);
  out.add("chaos_messages", chaos_traffic.messages);
  out.add("direct_data_messages", direct_data_messages);
  out.add("tsm_bytes", tsm_traffic.bytes);
  out.add("direct_bytes", direct_traffic.bytes);
  out.add("bulk_bytes", bulk_traffic.bytes);
  out.add("chaos_bytes", chaos_traffic.bytes);
  out.add("direct_vs_chaos", us[1] / us[2]);
  out.add("direct_vs_tsm_messages", direct_traffic.messages / tsm_traffic.messages);
  char title[200];
  std::snprintf(title, sizeof title,
                "xsm_reduction: edge reduction of %d doubles per node, %d nodes (median of %d x %d, slowest node)",
                cx::mesh::kVariables, n, o.plan.trials, o.plan.reps);
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
    if (squall::node() == 0) std::fprintf(stderr, "xsm_reduction: %s\n", e.what());
    return 2;
  }
  // Four ways in one run: fewer batches than chaos_exchange's unless asked.
  if (!squall::bench::has_flag(argc, argv, "--trials")) o.plan.trials = 11;
  if (!squall::bench::has_flag(argc, argv, "--reps")) o.plan.reps = 20;
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xsm_reduction (node %d): %s\n", squall::node(), e.what());
    return 1;
  }
}
