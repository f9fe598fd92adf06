// SPDX-License-Identifier: BSD-3-Clause
// dsmc: the initial gas, the three phases, conservation of particles and the x-move fraction.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "squall/apps/counter_rng.hpp"
#include "squall/apps/dsmc/cell_index.hpp"
#include "squall/apps/dsmc/collide.hpp"
#include "squall/apps/dsmc/inflow.hpp"
#include "squall/apps/dsmc/initial_gas.hpp"
#include "squall/apps/dsmc/sequential.hpp"

namespace squall::apps::dsmc {
namespace {

DsmcConfig small_config() {
  DsmcConfig config;
  config.cells = {12, 6, 6};
  config.steps = 100;
  return config;
}

// Every particle lies in the cell whose list holds it, lists are in id order, ids are unique.
void expect_consistent(const Grid& grid, const CellLists& lists) {
  ASSERT_EQ(lists.start.size(), grid.cell_count() + 1);
  ASSERT_EQ(lists.start.back(), lists.particles.size());
  std::set<std::uint64_t> ids;
  for (CellId cell = 0; cell < grid.cell_count(); ++cell) {
    for (std::uint32_t i = lists.start[cell]; i < lists.start[cell + 1]; ++i) {
      ASSERT_EQ(grid.cell_of(lists.particles[i].position), cell);
      if (i > lists.start[cell]) {
        ASSERT_LT(lists.particles[i - 1].id, lists.particles[i].id);
      }
      ASSERT_TRUE(ids.insert(lists.particles[i].id).second) << "duplicate id";
    }
  }
}

TEST(DsmcInput, PaperGridHas9720CellsAnd48600Particles) {
  const DsmcConfig config;
  const Grid grid{config.cells};
  const CellLists lists = generate_initial_gas(grid, config);
  EXPECT_EQ(grid.cell_count(), 9720u);
  EXPECT_EQ(lists.particles.size(), 48600u);
  expect_consistent(grid, lists);
  for (CellId cell = 0; cell < grid.cell_count(); ++cell) EXPECT_EQ(lists.start[cell + 1] - lists.start[cell], 5u);
}

TEST(DsmcInput, IsDeterministicForASeed) {
  DsmcConfig config = small_config();
  const Grid grid{config.cells};
  const CellLists a = generate_initial_gas(grid, config), b = generate_initial_gas(grid, config);
  config.seed = 2;
  const CellLists c = generate_initial_gas(grid, config);
  EXPECT_EQ(checksum_particles(a).value(), checksum_particles(b).value());
  EXPECT_NE(checksum_particles(a).value(), checksum_particles(c).value());
}

TEST(DsmcCollide, ConservesMomentumAndEnergyOfTheCell) {
  std::vector<Particle> particles;
  KeyedRandom random(1, Stream::kTest, 0);
  for (std::uint32_t k = 0; k < 12; ++k) {
    particles.push_back({k, {0.5, 0.5, 0.5}, {random.normal(), random.normal(), random.normal()}});
  }
  auto totals = [&] {
    Vec3 momentum;
    double energy = 0;
    for (const Particle& p : particles) {
      momentum += p.velocity;
      energy += norm2(p.velocity);
    }
    return std::pair{momentum, energy};
  };
  const auto [momentum, energy] = totals();
  std::size_t collisions = 0;
  for (std::uint32_t step = 1; step <= 20; ++step) collisions += collide_cell(0, step, particles, 0.5, 1);
  EXPECT_GT(collisions, 50u);
  const auto [momentum_after, energy_after] = totals();
  EXPECT_NEAR(momentum_after.x, momentum.x, 1e-12);
  EXPECT_NEAR(momentum_after.y, momentum.y, 1e-12);
  EXPECT_NEAR(momentum_after.z, momentum.z, 1e-12);
  EXPECT_NEAR(energy_after, energy, 1e-12 * energy);
}

TEST(DsmcCollide, ResultDoesNotDependOnTheOrderOfCells) {
  const DsmcConfig config = small_config();
  const Grid grid{config.cells};
  CellLists forward = generate_initial_gas(grid, config), backward = forward;
  auto collide = [&](CellLists& lists, CellId cell) {
    const auto first = lists.start[cell], last = lists.start[cell + 1];
    return collide_cell(cell, 7, std::span(lists.particles).subspan(first, last - first),
                        config.collision_speed, config.seed);
  };
  std::size_t collisions = 0;
  for (CellId cell = 0; cell < grid.cell_count(); ++cell) collisions += collide(forward, cell);
  for (CellId cell = grid.cell_count(); cell-- > 0;) collide(backward, cell);
  EXPECT_GT(collisions, 0u);
  EXPECT_EQ(checksum_particles(forward).value(), checksum_particles(backward).value());
}

TEST(DsmcInflow, ResultDoesNotDependOnHowSourcesAreSplit) {
  const DsmcConfig config = small_config();
  const Grid grid{config.cells};
  const std::vector<InflowSource> sources = inflow_sources(grid, config);
  EXPECT_EQ(sources.size(), 2u * (6 * 6 + 12 * 6 + 12 * 6));
  EXPECT_TRUE(std::any_of(sources.begin(), sources.end(), [](const auto& s) { return s.jet; }));
  std::vector<Particle> whole, split;
  generate_inflow(sources, 3, grid, config, whole);
  const std::span<const InflowSource> all(sources);
  generate_inflow(all.subspan(100), 3, grid, config, split);  // a second "node" goes first
  generate_inflow(all.first(100), 3, grid, config, split);
  ASSERT_GT(whole.size(), 0u);
  auto index = [&](const std::vector<Particle>& particles) {
    std::vector<std::int64_t> cells;
    for (const Particle& p : particles) cells.push_back(grid.cell_of(p.position));
    return build_cell_lists(particles, cells, grid.cell_count());
  };
  EXPECT_EQ(checksum_particles(index(whole)).value(), checksum_particles(index(split)).value());
  for (const Particle& p : whole) EXPECT_NE(grid.cell_of(p.position), kOutside);
}

TEST(DsmcIndex, DropsLeaversAndOrdersEachCellById) {
  const Grid grid{{2, 1, 1}};
  const std::vector<Particle> particles{
      {9, {1.5, 0.5, 0.5}, {}}, {4, {0.2, 0.5, 0.5}, {}}, {7, {1.1, 0.1, 0.9}, {}}, {5, {3.0, 0.5, 0.5}, {}}};
  const std::vector<std::int64_t> cells{1, 0, 1, kOutside};
  const CellLists lists = build_cell_lists(particles, cells, grid.cell_count());
  EXPECT_EQ(lists.start, (std::vector<std::uint32_t>{0, 1, 3}));
  ASSERT_EQ(lists.particles.size(), 3u);
  EXPECT_EQ(lists.particles[0].id, 4u);
  EXPECT_EQ(lists.particles[1].id, 7u);
  EXPECT_EQ(lists.particles[2].id, 9u);
}

TEST(DsmcRun, ConservesParticlesEveryStep) {
  const DsmcConfig config = small_config();
  PhaseTimer timer;
  SequentialDsmc simulation(config, timer);
  std::size_t entered = 0, left = 0;
  for (int step = 0; step < config.steps; ++step) {
    const std::size_t before = simulation.lists().particles.size();
    const StepCounts counts = simulation.step();
    const std::size_t after = simulation.lists().particles.size();
    ASSERT_EQ(after + counts.moves.left, before + counts.entered) << "step " << step;
    entered += counts.entered;
    left += counts.moves.left;
  }
  EXPECT_GT(entered, 1000u);
  EXPECT_GT(left, 1000u);
  expect_consistent(Grid{config.cells}, simulation.lists());
}

TEST(DsmcRun, MostMovesAreAlongTheJetAndTheGasGrows) {
  PhaseTimer timer;
  const DsmcResult result = run_dsmc(small_config(), timer);
  const double x_move_pct = 100.0 * static_cast<double>(result.totals.moves.along_x) /
                            static_cast<double>(result.totals.moves.changed_cell);
  EXPECT_GT(x_move_pct, 60.0);
  EXPECT_LT(x_move_pct, 75.0);
  EXPECT_GT(result.totals.collisions, 0u);
  // Denser free stream and jet than the initial gas: 5 particles per cell grows to ~7.5.
  const double per_cell = static_cast<double>(result.lists.particles.size()) / (12.0 * 6 * 6);
  EXPECT_GT(per_cell, 6.5);
  EXPECT_LT(per_cell, 8.5);
}

TEST(DsmcRun, ChecksumIsStableAcrossRunsAndBuilds) {
  DsmcConfig config = small_config();
  config.steps = 40;
  PhaseTimer timer;
  const std::string first = checksum_particles(run_dsmc(config, timer).lists).hex();
  EXPECT_EQ(checksum_particles(run_dsmc(config, timer).lists).hex(), first);
  // Pinned: the same in optimised and sanitizer (-O0) builds.
  EXPECT_EQ(first, "d6f1588c71519f7f");
}

}  // namespace
}  // namespace squall::apps::dsmc
