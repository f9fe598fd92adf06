// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/unstructured/parallel_report.hpp"

#include <algorithm>
#include <iostream>
#include <vector>

#include <squall/chaos/exchange.hpp>
#include <squall/collectives.hpp>
#include <squall/squall.hpp>

#include "squall/apps/run_report.hpp"
#include "squall/apps/unstructured/block_cut.hpp"
#include "squall/apps/unstructured/reference_check.hpp"

namespace squall::apps::unstructured {
namespace {

// phase "edge loop" -> "phase_edge_loop_s"
std::string phase_key(const std::string& phase) {
  std::string key = "phase_" + phase + "_s";
  std::replace(key.begin(), key.end(), ' ', '_');
  return key;
}

}  // namespace

int report_parallel_run(const Mesh& mesh, const RunOptions& options, const ParallelRun& run,
                        const std::function<void(Figures&)>& add_own) {
  const std::vector<std::int64_t> names = squall::chaos::allgather(run.names);
  const std::vector<NodeValues> values = squall::chaos::allgather(run.owned);
  // Every node times the same phases in the same order; the slowest node's time of each.
  std::vector<double> seconds;
  for (const auto& [phase, s] : run.phases->phases()) seconds.push_back(s);
  squall::allreduce(std::span<const double>(seconds), std::span<double>(seconds), squall::op::max{});
  if (squall::node() != 0) return 0;

  std::vector<NodeValues> by_name(mesh.node_count());
  for (std::size_t i = 0; i < names.size(); ++i) by_name[static_cast<std::size_t>(names[i])] = values[i];
  const ReferenceCheck check = check_against_reference(mesh, options.iterations, by_name);

  Figures figures;
  add_run_figures(figures, {"unstructured", run.version, squall::nodes(), run.region->seconds(),
                            run.region->counts(), check.ok, check.reference_seconds});
  for (std::size_t i = 0; i < seconds.size(); ++i) figures.add(phase_key(run.phases->phases()[i].first), seconds[i]);
  figures.add("mesh_nodes", static_cast<std::int64_t>(mesh.node_count()));
  figures.add("edges", static_cast<std::int64_t>(mesh.edges.size()));
  figures.add("faces", static_cast<std::int64_t>(mesh.faces.size()));
  figures.add("iterations", static_cast<std::int64_t>(options.iterations));
  figures.add("cut_edges_pct", run.cut_edges_pct);
  figures.add("block_parts", static_cast<std::int64_t>(options.parts));
  figures.add("block_cut_pct", block_cut_percent(mesh, options.parts));
  add_check_figures(figures, check);
  add_own(figures);
  figures.print_lines(std::cout);
  if (options.json) figures.print_json(std::cout);
  if (!check.ok) std::cerr << "unstructured_" << run.version << ": the result differs from the sequential reference\n";
  return check.ok ? 0 : 1;
}

}  // namespace squall::apps::unstructured
