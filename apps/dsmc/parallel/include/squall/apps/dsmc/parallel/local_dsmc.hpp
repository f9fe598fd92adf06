// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// One node's share of DSMC under a BlockPartition, with no communication of its own: every
// parallel version runs these phases and moves `leaving` to the owners its own way.
//
//   collide()  every cell of the node (collide_cell, keyed by the global cell)
//   move()     every particle of the node (move_particles) and the inflow of the node's sources
//              (generate_inflow); particles whose new cell is another node's go to `leaving`
//   index(arrived)  the node's cell lists (build_cell_lists) from those that stayed and `arrived`
//
// Ids, draws and the per-cell id order make the union of the nodes' lists equal the
// sequential reference's after every step.
#include <cstdint>
#include <span>
#include <vector>

#include "squall/apps/dsmc/config.hpp"
#include "squall/apps/dsmc/parallel/block_partition.hpp"
#include "squall/apps/dsmc/particles.hpp"
#include "squall/apps/dsmc/sequential.hpp"

namespace squall::apps::dsmc {

struct Leaving {
  std::vector<Particle> particles;
  std::vector<int> dest;  // the owner of each particle's new cell
  void clear() {
    particles.clear();
    dest.clear();
  }
};

class LocalDsmc {
 public:
  LocalDsmc(const DsmcConfig& config, const BlockPartition& partition, int node);

  void collide();
  void move(Leaving& leaving);
  // std::logic_error when an arrived particle's cell is not this node's.
  void index(std::span<const Particle> arrived);

  std::span<const Particle> particles() const { return lists_.particles; }
  const StepCounts& totals() const { return totals_; }  // this node's, summed over the steps

 private:
  void keep(const Particle& p, std::int64_t cell, Leaving& leaving);

  DsmcConfig config_;
  Grid grid_;
  BlockPartition partition_;
  int node_;
  std::vector<InflowSource> sources_;
  // Per global cell, looked up for every particle every step (BlockPartition computes them
  // with a dozen integer divisions): its owner, and its local index where the owner is us.
  std::vector<int> cell_owner_;
  std::vector<std::uint32_t> cell_local_;
  CellLists lists_;  // local cell numbering
  std::uint32_t step_ = 0;
  std::vector<std::int64_t> new_cell_;
  std::vector<Particle> entering_;
  std::vector<Particle> staying_;
  std::vector<std::int64_t> staying_cell_;  // local
  StepCounts totals_;
};

}  // namespace squall::apps::dsmc
