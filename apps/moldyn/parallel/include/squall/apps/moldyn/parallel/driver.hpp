// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The time-stepping loop every parallel moldyn version shares (the sequential reference's
// loop over this node's molecules), the check against the reference and the report. A
// version supplies where positions and forces live (a ForceBackend) and its runtime's
// collectives (MPI or Squall).
//
// Check: node 0 gathers the final positions and velocities, runs the sequential reference
// from the same options and compares the checksum (the state back in original names) and
// every step's kinetic and potential energy (relative difference at most kEnergyTolerance):
// checksum_ok when either matches (the parallel versions add forces in another order).
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "squall/apps/moldyn/parallel/decomposition.hpp"
#include "squall/apps/run_report.hpp"

namespace squall::apps::moldyn {

inline constexpr double kEnergyTolerance = 1e-8;

class ForceBackend {
 public:
  virtual ~ForceBackend() = default;
  // Collective: this node's molecules have moved; make the positions visible where needed.
  virtual void publish(std::span<const Vec3> own_position) = 0;
  // Collective, after publish: build this node's share of the interaction list.
  virtual void rebuild() = 0;
  // Collective, after publish: the total force on each of this node's molecules; returns the
  // potential energy of this node's pairs.
  virtual double forces(std::span<Vec3> own_force) = 0;
  // Figures the version adds (collective: called on every node; node 0's are printed).
  virtual std::vector<std::pair<std::string, double>> figures() = 0;
};

struct Runtime {
  int me = 0, nodes = 1;
  std::function<void(std::span<double>)> sum;  // in place, over the nodes
  std::function<void(std::span<double>)> max;
  // Every node's span concatenated in node order (on every node).
  std::function<std::vector<double>(std::span<const double>)> allgather;
  std::function<void()> region_begin;                        // collective
  std::function<std::pair<double, RunCounts>()> region_end;  // slowest node's seconds, summed counts
};

// Runs the steps, checks and reports; returns the exit status (1 when the check fails).
int run_parallel(const std::string& version, const ParallelOptions& options, const Decomposition& d,
                 ForceBackend& backend, const Runtime& rt);

// The pairs' cut fraction in percent over the nodes (collective).
double cut_pairs_pct(std::size_t local, std::size_t total, const Runtime& rt);

}  // namespace squall::apps::moldyn
