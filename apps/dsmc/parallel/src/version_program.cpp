// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/dsmc/parallel/version_program.hpp"

#include <iostream>

#include "squall/apps/dsmc/cell_index.hpp"
#include "squall/apps/dsmc/options.hpp"
#include "squall/apps/dsmc/sequential.hpp"
#include "squall/apps/phase_timer.hpp"

namespace squall::apps::dsmc {

std::string version_usage(const std::string& program, bool block_size) {
  std::string usage = "usage: " + program + " [--cells X Y Z] [--per-cell N] [--steps S] [--seed S]" +
                      (block_size ? " [--block-size B]" : "") +
                      " [--json]\n"
                      "  --cells X Y Z  grid of cells, x along the jet (default 30 18 18: 9720 cells)\n"
                      "  --per-cell N   initial particles per cell (default 5)\n"
                      "  --steps S      time steps (default 400)\n"
                      "  --seed S       generator seed (default 1)\n";
  if (block_size) usage += "  --block-size B coherence block of the receive buffers in bytes (default 4096)\n";
  return usage + "  --json         print the figures as one JSON object on the last line\n";
}

VersionOptions read_version_options(Options& options, bool block_size) {
  VersionOptions v;
  v.config = read_dsmc_config(options);
  if (block_size) {
    // Sizes the receive buffers before the TSM or XSM segment checks it (0 divided there).
    v.block_size = options.block_size();
  }
  v.json = options.flag("json");
  options.finish();
  return v;
}

FinalCheck check_final_state(const DsmcConfig& config, std::vector<Particle> gathered) {
  const Grid grid{config.cells};
  std::vector<std::int64_t> cells(gathered.size());
  for (std::size_t i = 0; i < gathered.size(); ++i) cells[i] = grid.cell_of(gathered[i].position);
  const CellLists mine = build_cell_lists(gathered, cells, grid.cell_count());
  PhaseTimer timer;
  const DsmcResult reference = run_dsmc(config, timer);
  FinalCheck check;
  check.checksum = checksum_particles(mine).hex();
  check.reference = checksum_particles(reference.lists).hex();
  check.particles = gathered.size();
  check.reference_seconds = timer.compute_seconds();
  check.ok = check.checksum == check.reference && mine.particles.size() == reference.lists.particles.size();
  return check;
}

void print_report(const VersionReport& report, bool json) {
  Figures figures;
  RunFigures run = report.run;
  run.seq_time_s = report.check.reference_seconds;
  add_run_figures(figures, run);
  for (const auto& [phase, seconds] : report.phase_seconds) figures.add("phase_" + phase + "_s", seconds);
  figures.add("particles_end", static_cast<std::int64_t>(report.check.particles));
  figures.add("checksum", report.check.checksum);
  figures.add("checksum_reference", report.check.reference);
  for (const auto& [key, value] : report.extra) figures.add(key, value);
  std::cout << "dsmc_" << report.run.version << ": " << report.run.nodes << " nodes\n";
  figures.print_lines(std::cout);
  if (json) figures.print_json(std::cout);
}

}  // namespace squall::apps::dsmc
