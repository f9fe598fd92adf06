// SPDX-License-Identifier: BSD-3-Clause
// moldyn: the lattice input, the interaction list, the forces and energy conservation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "squall/apps/moldyn/forces.hpp"
#include "squall/apps/moldyn/integrator.hpp"
#include "squall/apps/moldyn/interaction_list.hpp"
#include "squall/apps/moldyn/sequential.hpp"

namespace squall::apps::moldyn {
namespace {

LatticeConfig small_lattice(std::uint64_t seed = 1) {
  LatticeConfig config;
  config.cells = {6, 6, 6};  // 864 molecules
  config.seed = seed;
  return config;
}

std::vector<Pair> brute_force_pairs(const Molecules& m, double radius) {
  std::vector<Pair> pairs;
  for (std::uint32_t i = 0; i < m.size(); ++i) {
    for (std::uint32_t j = i + 1; j < m.size(); ++j) {
      if (std::sqrt(norm2(minimum_image(m.position[i] - m.position[j], m.box))) < radius) {
        pairs.push_back({i, j});
      }
    }
  }
  return pairs;
}

TEST(MoldynInput, PaperLatticeHas8788MoleculesAndOneMillionInteractions) {
  const Molecules m = generate_molecules(LatticeConfig{});
  ASSERT_EQ(m.size(), 8788u);
  EXPECT_EQ(default_interactions(m.size()), 1000000u);
  const double radius = radius_for_pairs(m.position, m.box, 1000000);
  EXPECT_EQ(build_interaction_list(m.position, m.box, radius).size(), 1000000u);
}

TEST(MoldynInput, MoleculesStartInTheBoxWithoutNetMomentumAtTheTemperature) {
  const Molecules m = generate_molecules(small_lattice());
  ASSERT_EQ(m.size(), 4u * 6 * 6 * 6);
  Vec3 momentum;
  for (std::size_t i = 0; i < m.size(); ++i) {
    const Vec3& p = m.position[i];
    ASSERT_TRUE(p.x >= 0 && p.x < m.box.x && p.y >= 0 && p.y < m.box.y && p.z >= 0 && p.z < m.box.z);
    momentum += m.velocity[i];
  }
  EXPECT_LT(std::sqrt(norm2(momentum)), 1e-9);
  const double temperature = 2.0 * kinetic_energy(m.velocity) / (3.0 * static_cast<double>(m.size()));
  EXPECT_NEAR(temperature, 0.72, 0.07);
  EXPECT_NEAR(m.box.x, 6 * std::cbrt(4.0 / 0.8442), 1e-12);
}

TEST(MoldynInput, IsDeterministicForASeed) {
  const Molecules a = generate_molecules(small_lattice(5)), b = generate_molecules(small_lattice(5));
  const Molecules c = generate_molecules(small_lattice(6));
  EXPECT_EQ(a.position, b.position);
  EXPECT_EQ(a.velocity, b.velocity);
  EXPECT_NE(a.position, c.position);
}

TEST(MoldynList, RadiusHoldsExactlyTheTargetAndMatchesBruteForce) {
  const Molecules m = generate_molecules(small_lattice());
  for (std::size_t target : {20000, 98316}) {
    const double radius = radius_for_pairs(m.position, m.box, target);
    const std::vector<Pair> list = build_interaction_list(m.position, m.box, radius);
    EXPECT_EQ(list.size(), target);
    EXPECT_EQ(list, brute_force_pairs(m, radius));
  }
}

TEST(MoldynList, BuildingBlockByBlockGivesTheSamePairs) {
  const Molecules m = generate_molecules(small_lattice());
  const double radius = 3.0;
  const std::vector<IndexRange> blocks{{0, 300}, {300, 301}, {301, 864}};
  std::vector<Pair> pairs;
  for (std::size_t p = 0; p < blocks.size(); ++p) {
    append_pairs_within(blocks[p], m.position, m.box, radius * radius, pairs);
    for (std::size_t q = p + 1; q < blocks.size(); ++q) {
      append_pairs_between(blocks[p], blocks[q], m.position, m.box, radius * radius, pairs);
    }
  }
  std::sort(pairs.begin(), pairs.end());
  EXPECT_EQ(pairs, build_interaction_list(m.position, m.box, radius));
}

TEST(MoldynList, RejectsABoxTooSmallForTheTarget) {
  LatticeConfig config = small_lattice();
  config.cells = {3, 3, 3};
  const Molecules m = generate_molecules(config);
  EXPECT_THROW(radius_for_pairs(m.position, m.box, default_interactions(m.size()) * 4), std::invalid_argument);
  EXPECT_THROW(radius_for_pairs(m.position, m.box, 0), std::invalid_argument);
}

TEST(MoldynForces, AreMinusTheGradientOfThePotentialAndSumToZero) {
  Molecules m = generate_molecules(small_lattice());
  const LennardJones potential(2.5);
  const std::vector<Pair> pairs = build_interaction_list(m.position, m.box, 2.9);
  std::vector<Vec3> force(m.size());
  potential.accumulate_forces(pairs, m.position, m.box, force);
  Vec3 total;
  for (const Vec3& f : force) total += f;
  EXPECT_LT(std::sqrt(norm2(total)), 1e-9);

  auto energy = [&] {
    std::vector<Vec3> unused(m.size());
    return potential.accumulate_forces(pairs, m.position, m.box, unused);
  };
  for (std::uint32_t molecule : {0u, 17u, 500u}) {
    const double h = 1e-6;
    const Vec3 original = m.position[molecule];
    m.position[molecule].x = original.x + h;
    const double up = energy();
    m.position[molecule].x = original.x - h;
    const double down = energy();
    m.position[molecule] = original;
    EXPECT_NEAR(force[molecule].x, -(up - down) / (2 * h), 1e-5 * (1 + std::abs(force[molecule].x)));
  }
}

MoldynConfig small_run() {
  MoldynConfig config;
  config.lattice = small_lattice();
  return config;
}

TEST(MoldynRun, ConservesTotalEnergyOver30Steps) {
  PhaseTimer timer;
  const MoldynResult result = run_moldyn(small_run(), timer);
  ASSERT_EQ(result.energy.size(), 31u);
  EXPECT_EQ(result.list_sizes.size(), 2u);  // built at steps 0 and 20
  EXPECT_EQ(result.list_sizes.front(), default_interactions(864));
  const double initial = result.energy.front().total();
  double kinetic_change = 0;
  for (const Energy& e : result.energy) {
    // Stated tolerance: with dt = 0.005 the total stays within 5e-4 of its start (relative;
    // the velocity-Verlet error, which shrinks as dt squared: 2e-4 is reached here).
    EXPECT_LT(std::abs(e.total() - initial), 5e-4 * std::abs(initial));
    kinetic_change = std::max(kinetic_change, std::abs(e.kinetic - result.energy.front().kinetic));
  }
  // The molecules do exchange energy: conservation is not a frozen system.
  EXPECT_GT(kinetic_change, 10 * 5e-4 * std::abs(initial));
}

TEST(MoldynRun, ListStillHoldsEveryPairWithinTheCutoffBeforeTheNextRebuild) {
  PhaseTimer timer;
  const MoldynResult result = run_moldyn(small_run(), timer);  // 10 steps after the last build
  std::vector<Pair> listed = result.pairs;
  std::sort(listed.begin(), listed.end());
  for (const Pair& pair : brute_force_pairs(result.molecules, result.cutoff)) {
    ASSERT_TRUE(std::binary_search(listed.begin(), listed.end(), pair)) << pair.i << "," << pair.j;
  }
}

TEST(MoldynRun, ChecksumIsStableAcrossRunsAndBuilds) {
  PhaseTimer timer;
  const std::string first = checksum_molecules(run_moldyn(small_run(), timer).molecules).hex();
  EXPECT_EQ(checksum_molecules(run_moldyn(small_run(), timer).molecules).hex(), first);
  // Pinned: the same in optimised and sanitizer (-O0) builds.
  EXPECT_EQ(first, "d65e9067de642322");
}

}  // namespace
}  // namespace squall::apps::moldyn
