// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/dsmc/parallel/local_dsmc.hpp"

#include <stdexcept>
#include <string>

#include "squall/apps/dsmc/cell_index.hpp"
#include "squall/apps/dsmc/collide.hpp"
#include "squall/apps/dsmc/initial_gas.hpp"
#include "squall/apps/dsmc/move.hpp"

namespace squall::apps::dsmc {

LocalDsmc::LocalDsmc(const DsmcConfig& config, const BlockPartition& partition, int node)
    : config_(config), grid_{config.cells}, partition_(partition), node_(node) {
  // The generator's draws are keyed by cell: generating the whole box and keeping this
  // node's cells gives exactly the reference's initial particles (input, not timed).
  cell_owner_.resize(static_cast<std::size_t>(grid_.cell_count()));
  cell_local_.resize(cell_owner_.size());
  for (CellId c = 0; c < grid_.cell_count(); ++c) {
    cell_owner_[c] = partition_.owner(c);
    if (cell_owner_[c] == node_) cell_local_[c] = static_cast<std::uint32_t>(partition_.local_index(node_, c));
  }
  const CellLists all = generate_initial_gas(grid_, config_);
  std::vector<std::int64_t> cells;
  for (CellId c = 0; c < grid_.cell_count(); ++c) {
    if (cell_owner_[c] != node_) continue;
    for (std::uint32_t i = all.start[c]; i < all.start[c + 1]; ++i) {
      staying_.push_back(all.particles[i]);
      cells.push_back(cell_local_[c]);
    }
  }
  lists_ = build_cell_lists(staying_, cells, partition_.local_cell_count(node_));
  staying_.clear();
  const std::vector<InflowSource> sources = inflow_sources(grid_, config_);
  sources_ = partition_.sources_of(node_, sources);
}

void LocalDsmc::collide() {
  ++step_;
  auto& particles = lists_.particles;
  for (std::size_t local = 0; local + 1 < lists_.start.size(); ++local) {
    const auto first = lists_.start[local], last = lists_.start[local + 1];
    totals_.collisions += collide_cell(partition_.global_cell(node_, local), step_,
                                       std::span(particles).subspan(first, last - first), config_.collision_speed,
                                       config_.seed);
  }
}

void LocalDsmc::keep(const Particle& p, std::int64_t cell, Leaving& leaving) {
  if (cell == kOutside) return;
  const int owner = cell_owner_[static_cast<std::size_t>(cell)];
  if (owner == node_) {
    staying_.push_back(p);
    staying_cell_.push_back(cell_local_[static_cast<std::size_t>(cell)]);
  } else {
    leaving.particles.push_back(p);
    leaving.dest.push_back(owner);
  }
}

void LocalDsmc::move(Leaving& leaving) {
  auto& particles = lists_.particles;
  new_cell_.resize(particles.size());
  totals_.moves += move_particles(grid_, particles, new_cell_);
  entering_.clear();
  generate_inflow(sources_, step_, grid_, config_, entering_);
  totals_.entered += entering_.size();

  staying_.clear();
  staying_cell_.clear();
  for (std::size_t i = 0; i < particles.size(); ++i) keep(particles[i], new_cell_[i], leaving);
  for (const Particle& p : entering_) keep(p, grid_.cell_of(p.position), leaving);
}

void LocalDsmc::index(std::span<const Particle> arrived) {
  for (const Particle& p : arrived) {
    const std::int64_t cell = grid_.cell_of(p.position);
    if (cell == kOutside || cell_owner_[static_cast<std::size_t>(cell)] != node_) {
      throw std::logic_error("dsmc: node " + std::to_string(node_) + " received particle " + std::to_string(p.id) +
                             " whose cell is not its own");
    }
    staying_.push_back(p);
    staying_cell_.push_back(cell_local_[static_cast<std::size_t>(cell)]);
  }
  lists_ = build_cell_lists(staying_, staying_cell_, partition_.local_cell_count(node_));
}

}  // namespace squall::apps::dsmc
