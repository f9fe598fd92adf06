// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/moldyn/parallel/driver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "squall/apps/figures.hpp"

#include "squall/apps/moldyn/integrator.hpp"

namespace squall::apps::moldyn {
namespace {

using Clock = std::chrono::steady_clock;

std::span<const double> as_doubles(std::span<const Vec3> v) {
  static_assert(sizeof(Vec3) == 3 * sizeof(double));
  return {reinterpret_cast<const double*>(v.data()), 3 * v.size()};
}

struct Check {
  bool ok = false, checksum_match = false;
  std::string checksum, reference_checksum;
  double max_energy_dev = 0, energy_final = 0, reference_energy_final = 0, reference_seconds = 0;
};

Check check(const ParallelOptions& options, const Decomposition& d, const std::vector<double>& position,
            const std::vector<double>& velocity, const std::vector<Energy>& energy) {
  Check c;
  PhaseTimer timer;
  const MoldynResult reference = run_moldyn(options.config, timer);
  c.reference_seconds = timer.compute_seconds();
  Molecules mine = reference.molecules;
  for (std::size_t k = 0; k < d.original.size(); ++k) {
    mine.position[d.original[k]] = {position[3 * k], position[3 * k + 1], position[3 * k + 2]};
    mine.velocity[d.original[k]] = {velocity[3 * k], velocity[3 * k + 1], velocity[3 * k + 2]};
  }
  c.checksum = checksum_molecules(mine).hex();
  c.reference_checksum = checksum_molecules(reference.molecules).hex();
  c.checksum_match = c.checksum == c.reference_checksum;
  const auto deviation = [](double a, double b) { return std::abs(a - b) / std::max(1.0, std::abs(b)); };
  for (std::size_t s = 0; s < energy.size() && s < reference.energy.size(); ++s) {
    c.max_energy_dev = std::max({c.max_energy_dev, deviation(energy[s].kinetic, reference.energy[s].kinetic),
                                 deviation(energy[s].potential, reference.energy[s].potential)});
  }
  c.energy_final = energy.back().total();
  c.reference_energy_final = reference.energy.back().total();
  c.ok = energy.size() == reference.energy.size() && (c.checksum_match || c.max_energy_dev <= kEnergyTolerance);
  return c;
}

}  // namespace

double cut_pairs_pct(std::size_t local, std::size_t total, const Runtime& rt) {
  std::vector<double> v{static_cast<double>(local), static_cast<double>(total)};
  rt.sum(v);
  return v[1] > 0 ? 100.0 * (1.0 - v[0] / v[1]) : 0.0;
}

int run_parallel(const std::string& version, const ParallelOptions& options, const Decomposition& d,
                 ForceBackend& backend, const Runtime& rt) {
  const MoldynConfig& config = options.config;
  const IndexRange part = d.part(rt.me);
  const auto begin = static_cast<std::ptrdiff_t>(part.begin), end = static_cast<std::ptrdiff_t>(part.end);
  std::vector<Vec3> position(d.molecules.position.begin() + begin, d.molecules.position.begin() + end);
  std::vector<Vec3> velocity(d.molecules.velocity.begin() + begin, d.molecules.velocity.begin() + end);
  std::vector<Vec3> force(position.size());
  std::vector<double> kinetic, potential;  // this node's share, per step
  double list_s = 0, forces_s = 0, integrate_s = 0;
  const auto timed = [](double& total, auto&& f) {
    const Clock::time_point t = Clock::now();
    f();
    total += std::chrono::duration<double>(Clock::now() - t).count();
  };

  rt.region_begin();
  timed(forces_s, [&] { backend.publish(position); });
  timed(list_s, [&] { backend.rebuild(); });
  timed(forces_s, [&] { potential.push_back(backend.forces(force)); });
  kinetic.push_back(kinetic_energy(velocity));
  for (int step = 1; step <= config.steps; ++step) {
    timed(integrate_s, [&] {
      half_kick(velocity, force, config.dt);
      drift(position, velocity, d.molecules.box, config.dt);
    });
    timed(forces_s, [&] { backend.publish(position); });
    if (step % config.rebuild_every == 0) timed(list_s, [&] { backend.rebuild(); });
    timed(forces_s, [&] { potential.push_back(backend.forces(force)); });
    timed(integrate_s, [&] {
      half_kick(velocity, force, config.dt);
      kinetic.push_back(kinetic_energy(velocity));
    });
  }
  const auto [seconds, counts] = rt.region_end();

  std::vector<double> phases{list_s, forces_s, integrate_s};
  rt.max(phases);
  rt.sum(kinetic);
  rt.sum(potential);
  std::vector<Energy> energy;
  for (std::size_t s = 0; s < kinetic.size(); ++s) energy.push_back({kinetic[s], potential[s]});
  const std::vector<double> all_position = rt.allgather(as_doubles(position));
  const std::vector<double> all_velocity = rt.allgather(as_doubles(velocity));
  const std::vector<std::pair<std::string, double>> added = backend.figures();
  Check c;
  if (rt.me == 0) c = check(options, d, all_position, all_velocity, energy);
  std::vector<double> ok{c.ok ? 1.0 : 0.0};
  rt.sum(ok);
  if (rt.me != 0) return ok[0] > 0 ? 0 : 1;

  std::printf("moldyn_%s: %zu molecules on %d nodes, list radius %.4f, cut-off %.4f\n", version.c_str(),
              d.molecules.size(), rt.nodes, d.list_radius, d.cutoff);
  std::printf("  %4s %16s %16s %16s\n", "step", "kinetic", "potential", "total");
  for (std::size_t s = 0; s < energy.size(); ++s) {
    std::printf("  %4zu %16.8f %16.8f %16.8f\n", s, energy[s].kinetic, energy[s].potential, energy[s].total());
  }
  std::fflush(stdout);
  Figures out;
  add_run_figures(out, {"moldyn", version, rt.nodes, seconds, counts, c.ok, c.reference_seconds});
  out.add("phase_list_build_s", phases[0]);
  out.add("phase_forces_s", phases[1]);
  out.add("phase_integrate_s", phases[2]);
  out.add("molecules", static_cast<std::int64_t>(d.molecules.size()));
  out.add("energy_final", c.energy_final);
  out.add("energy_final_reference", c.reference_energy_final);
  out.add("energy_max_rel_dev", c.max_energy_dev);
  out.add("checksum", c.checksum);
  out.add("checksum_reference", c.reference_checksum);
  out.add("checksum_match", std::string(c.checksum_match ? "true" : "false"));
  for (const auto& [key, value] : added) out.add(key, value);
  out.print_lines(std::cout);
  if (options.json) out.print_json(std::cout);
  return c.ok ? 0 : 1;
}

}  // namespace squall::apps::moldyn
