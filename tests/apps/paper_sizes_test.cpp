// SPDX-License-Identifier: BSD-3-Clause
// The paper's full DSMC run (Table 1: 48,600 particles growing to 72,693 over 400 steps).
// Seconds in an optimised build, too slow under the sanitizers: labelled no-sanitizer.
#include <gtest/gtest.h>

#include <cmath>

#include "squall/apps/dsmc/sequential.hpp"

namespace squall::apps::dsmc {
namespace {

TEST(DsmcPaperRun, GrowsTo72693ParticlesWithinFivePercentMostlyMovingAlongX) {
  PhaseTimer timer;
  const DsmcResult result = run_dsmc(DsmcConfig{}, timer);
  EXPECT_EQ(result.lists.start.size() - 1, 9720u);
  EXPECT_EQ(result.initial_particles, 48600u);
  EXPECT_NEAR(static_cast<double>(result.lists.particles.size()), 72693.0, 0.05 * 72693);
  EXPECT_EQ(result.lists.particles.size() + result.totals.moves.left,
            result.initial_particles + result.totals.entered);
  const double x_move_pct = 100.0 * static_cast<double>(result.totals.moves.along_x) /
                            static_cast<double>(result.totals.moves.changed_cell);
  EXPECT_GT(x_move_pct, 63.0);
  EXPECT_LT(x_move_pct, 70.0);
}

}  // namespace
}  // namespace squall::apps::dsmc
