// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The run of a Squall version (CHAOS, TSM, XSM) of DSMC: each node builds its LocalDsmc, then
// the timed region (a CountedRegion) runs the steps - collide, move, the version's exchange
// of the leaving particles, index - and node 0 gathers the final particles (chaos::exchange,
// after the region) and checks them against the sequential reference.
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "squall/apps/dsmc/parallel/block_partition.hpp"
#include "squall/apps/dsmc/parallel/local_dsmc.hpp"
#include "squall/apps/dsmc/parallel/version_program.hpp"
#include "squall/apps/options.hpp"

namespace squall::apps::dsmc {

// A version's way of moving particles to the owners of their new cells. Collective: every
// node calls exchange once per step; it returns the particles that arrived at this node.
class ParticleExchange {
 public:
  virtual ~ParticleExchange() = default;
  virtual std::vector<Particle> exchange(const Leaving& leaving) = 0;
  // Figures of this node summed over the nodes by the driver (collective order: the same
  // keys on every node).
  virtual std::vector<std::pair<std::string, double>> figures() const { return {}; }
};

using ExchangeMaker = std::unique_ptr<ParticleExchange> (*)(const BlockPartition& partition,
                                                            const VersionOptions& options);

// Reads the options, runs, reports on node 0; 0 when the checksum matches on every node, else 1.
int run_squall_version(Options& options, const std::string& version, bool block_size, ExchangeMaker make);

}  // namespace squall::apps::dsmc
