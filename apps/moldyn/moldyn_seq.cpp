// SPDX-License-Identifier: BSD-3-Clause
// moldyn_seq: the sequential reference of the paper's molecular-dynamics application.
#include <cstdio>
#include <iostream>

#include "squall/apps/figures.hpp"
#include "squall/apps/moldyn/options.hpp"
#include "squall/apps/moldyn/sequential.hpp"
#include "squall/apps/options.hpp"

namespace {

constexpr const char* kUsage =
    "usage: moldyn_seq [--cells C] [--interactions P] [--steps S] [--rebuild-every R] [--seed S] [--json]\n"
    "  --cells C          FCC lattice cells per side, 4 molecules each (default 13: 8788 molecules;\n"
    "                     at most 64)\n"
    "  --interactions P   pairs in the first interaction list (default 10^6 x molecules / 8788;\n"
    "                     at most 2^27)\n"
    "  --steps S          velocity-Verlet steps (default 30)\n"
    "  --rebuild-every R  steps between interaction-list builds (default 20)\n"
    "  --seed S           generator seed (default 1)\n"
    "  --json             print the figures as one JSON object on the last line\n";

int run(squall::apps::Options& options) {
  using namespace squall::apps;
  using namespace squall::apps::moldyn;
  const MoldynConfig config = read_moldyn_config(options);
  const bool json = options.flag("json");
  options.finish();

  PhaseTimer timer;
  const MoldynResult result = run_moldyn(config, timer);

  std::printf("moldyn: %zu molecules, box %.4f, list radius %.4f, cut-off %.4f\n",
              result.molecules.size(), result.molecules.box.x, result.list_radius, result.cutoff);
  std::printf("  %4s %16s %16s %16s\n", "step", "kinetic", "potential", "total");
  for (std::size_t s = 0; s < result.energy.size(); ++s) {
    const Energy& e = result.energy[s];
    std::printf("  %4zu %16.8f %16.8f %16.8f\n", s, e.kinetic, e.potential, e.total());
  }
  std::fflush(stdout);

  const double initial = result.energy.front().total(), final = result.energy.back().total();
  const double compute = timer.compute_seconds();
  Figures figures;
  figures.add("app", std::string("moldyn"));
  figures.add("molecules", static_cast<std::int64_t>(result.molecules.size()));
  figures.add("interactions", static_cast<std::int64_t>(result.list_sizes.front()));
  figures.add("interactions_last_build", static_cast<std::int64_t>(result.list_sizes.back()));
  figures.add("list_builds", static_cast<std::int64_t>(result.list_sizes.size()));
  figures.add("list_radius", result.list_radius);
  figures.add("cutoff", result.cutoff);
  figures.add("steps", static_cast<std::int64_t>(config.steps));
  figures.add("seed", static_cast<std::int64_t>(config.lattice.seed));
  figures.add("energy_initial", initial);
  figures.add("energy_final", final);
  figures.add("energy_drift_rel", (final - initial) / std::abs(initial));
  figures.add("checksum", checksum_molecules(result.molecules).hex());
  figures.add("generate_s", timer.seconds("generate"));
  figures.add("list_build_s", timer.seconds("list build"));
  figures.add("forces_s", timer.seconds("forces"));
  figures.add("integrate_s", timer.seconds("integrate"));
  figures.add("compute_s", compute);
  figures.print_lines(std::cout);
  if (json) figures.print_json(std::cout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return squall::apps::run_program(argc, argv, "moldyn_seq", kUsage, run);
}
