// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The sequential reference: steps of collide (every cell), move (every particle), inflow
// (every source) and index.
#include <vector>

#include "squall/apps/checksum.hpp"
#include "squall/apps/dsmc/config.hpp"
#include "squall/apps/dsmc/grid.hpp"
#include "squall/apps/dsmc/inflow.hpp"
#include "squall/apps/dsmc/move.hpp"
#include "squall/apps/dsmc/particles.hpp"
#include "squall/apps/phase_timer.hpp"

namespace squall::apps::dsmc {

struct StepCounts {
  std::size_t collisions = 0;
  std::size_t entered = 0;
  MoveCounts moves;  // moves.left: particles that left the box
};

class SequentialDsmc {
 public:
  // Generates the initial gas (timed as "generate").
  SequentialDsmc(const DsmcConfig& config, PhaseTimer& timer);

  // One step; phases timed: "collide", "move", "inflow", "index".
  StepCounts step();

  const CellLists& lists() const { return lists_; }
  std::uint32_t steps_done() const { return step_; }

 private:
  DsmcConfig config_;
  Grid grid_;
  PhaseTimer& timer_;
  CellLists lists_;
  std::vector<InflowSource> sources_;
  std::uint32_t step_ = 0;
  std::vector<std::int64_t> new_cell_;
  std::vector<Particle> entering_;
};

struct DsmcResult {
  CellLists lists;  // the final state
  std::size_t initial_particles = 0;
  StepCounts totals;  // summed over all steps
};

DsmcResult run_dsmc(const DsmcConfig& config, PhaseTimer& timer);

// Every particle in list order (cell, then id): its id and its position and velocity
// quantised to 1e-9.
Checksum checksum_particles(const CellLists& lists);

}  // namespace squall::apps::dsmc
