// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Squall's counters over a timed region, summed over the nodes (collective), for RunCounts.
//
//   squall::apps::CountedRegion region;   // collective: a barrier, then counters and clock start
//   ... the computation ...
//   region.end();                          // collective: the slowest node's seconds, the counts
//   region.seconds(), region.counts()
#include <chrono>

#include <squall/stats.hpp>

#include "squall/apps/run_report.hpp"

namespace squall::apps {

class CountedRegion {
 public:
  CountedRegion();  // collective
  void end();       // collective
  double seconds() const { return seconds_; }
  const RunCounts& counts() const { return counts_; }

 private:
  stats::snapshot before_;
  std::chrono::steady_clock::time_point start_;
  double seconds_ = 0;
  RunCounts counts_;
};

}  // namespace squall::apps
