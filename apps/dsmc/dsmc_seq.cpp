// SPDX-License-Identifier: BSD-3-Clause
// dsmc_seq: the sequential reference of the paper's direct simulation Monte Carlo application.
#include <iostream>

#include "squall/apps/dsmc/options.hpp"
#include "squall/apps/dsmc/sequential.hpp"
#include "squall/apps/figures.hpp"
#include "squall/apps/options.hpp"

namespace {

constexpr const char* kUsage =
    "usage: dsmc_seq [--cells X Y Z] [--per-cell N] [--steps S] [--seed S] [--json]\n"
    "  --cells X Y Z  grid of cells, x along the jet (default 30 18 18: 9720 cells)\n"
    "  --per-cell N   initial particles per cell (default 5)\n"
    "  --steps S      time steps (default 400)\n"
    "  --seed S       generator seed (default 1)\n"
    "  --json         print the figures as one JSON object on the last line\n";

int run(squall::apps::Options& options) {
  using namespace squall::apps;
  using namespace squall::apps::dsmc;
  const DsmcConfig config = read_dsmc_config(options);
  const bool json = options.flag("json");
  options.finish();

  PhaseTimer timer;
  const DsmcResult result = run_dsmc(config, timer);

  const auto count = [](std::size_t n) { return static_cast<std::int64_t>(n); };
  const double x_move_pct = result.totals.moves.changed_cell
                                ? 100.0 * static_cast<double>(result.totals.moves.along_x) /
                                      static_cast<double>(result.totals.moves.changed_cell)
                                : 0.0;
  const double compute = timer.compute_seconds();
  Figures figures;
  figures.add("app", std::string("dsmc"));
  figures.add("cells", count(result.lists.start.size() - 1));
  figures.add("steps", static_cast<std::int64_t>(config.steps));
  figures.add("seed", static_cast<std::int64_t>(config.seed));
  figures.add("particles_start", count(result.initial_particles));
  figures.add("particles_end", count(result.lists.particles.size()));
  figures.add("entered", count(result.totals.entered));
  figures.add("left", count(result.totals.moves.left));
  figures.add("collisions", count(result.totals.collisions));
  figures.add("cell_changes", count(result.totals.moves.changed_cell));
  figures.add("x_move_pct", x_move_pct);
  figures.add("checksum", checksum_particles(result.lists).hex());
  figures.add("generate_s", timer.seconds("generate"));
  figures.add("collide_s", timer.seconds("collide"));
  figures.add("move_s", timer.seconds("move"));
  figures.add("inflow_s", timer.seconds("inflow"));
  figures.add("index_s", timer.seconds("index"));
  figures.add("compute_s", compute);
  std::cout << "dsmc: " << config.cells[0] << "x" << config.cells[1] << "x" << config.cells[2]
            << " cells, " << config.steps << " steps\n";
  figures.print_lines(std::cout);
  if (json) figures.print_json(std::cout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return squall::apps::run_program(argc, argv, "dsmc_seq", kUsage, run);
}
