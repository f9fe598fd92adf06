// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/dsmc/sequential.hpp"

#include "squall/apps/dsmc/cell_index.hpp"
#include "squall/apps/dsmc/collide.hpp"
#include "squall/apps/dsmc/initial_gas.hpp"

namespace squall::apps::dsmc {

SequentialDsmc::SequentialDsmc(const DsmcConfig& config, PhaseTimer& timer)
    : config_(config), grid_{config.cells}, timer_(timer) {
  auto scope = timer_.time("generate");
  lists_ = generate_initial_gas(grid_, config_);
  sources_ = inflow_sources(grid_, config_);
}

StepCounts SequentialDsmc::step() {
  ++step_;
  StepCounts counts;
  auto& particles = lists_.particles;
  {
    auto scope = timer_.time("collide");
    for (CellId cell = 0; cell < grid_.cell_count(); ++cell) {
      const auto first = lists_.start[cell], last = lists_.start[cell + 1];
      counts.collisions += collide_cell(cell, step_, std::span(particles).subspan(first, last - first),
                                        config_.collision_speed, config_.seed);
    }
  }
  {
    auto scope = timer_.time("move");
    new_cell_.resize(particles.size());
    counts.moves = move_particles(grid_, particles, new_cell_);
  }
  {
    auto scope = timer_.time("inflow");
    entering_.clear();
    generate_inflow(sources_, step_, grid_, config_, entering_);
    counts.entered = entering_.size();
  }
  {
    auto scope = timer_.time("index");
    for (const Particle& p : entering_) {
      particles.push_back(p);
      new_cell_.push_back(grid_.cell_of(p.position));
    }
    lists_ = build_cell_lists(particles, new_cell_, grid_.cell_count());
  }
  return counts;
}

DsmcResult run_dsmc(const DsmcConfig& config, PhaseTimer& timer) {
  SequentialDsmc simulation(config, timer);
  DsmcResult result;
  result.initial_particles = simulation.lists().particles.size();
  for (int s = 0; s < config.steps; ++s) {
    const StepCounts counts = simulation.step();
    result.totals.collisions += counts.collisions;
    result.totals.entered += counts.entered;
    result.totals.moves += counts.moves;
  }
  result.lists = simulation.lists();
  return result;
}

Checksum checksum_particles(const CellLists& lists) {
  Checksum checksum;
  for (const Particle& p : lists.particles) {
    checksum.add(p.id);
    for (const Vec3* v : {&p.position, &p.velocity}) {
      checksum.add_quantised(v->x, 1e-9);
      checksum.add_quantised(v->y, 1e-9);
      checksum.add_quantised(v->z, 1e-9);
    }
  }
  return checksum;
}

}  // namespace squall::apps::dsmc
