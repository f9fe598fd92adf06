// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// What every parallel version of an application reports, in one form for scripts/compare:
// the timed region's time (the slowest node's), the job's counts over that region summed
// over the nodes, and whether the result matches the sequential reference.
//
//   squall::apps::RunCounts counts = ...;       // squall_counts() below, or an MPI version's own
//   squall::apps::Figures f;
//   squall::apps::add_run_figures(f, {"unstructured", "chaos", nodes, seconds, counts, ok, seq_seconds});
//   f.add("cut_edges_pct", ...);                // anything the version adds
//   if (node == 0) (json ? f.print_json(std::cout) : f.print_lines(std::cout));
#include <string>

#include "squall/apps/figures.hpp"

namespace squall::apps {

struct RunCounts {
  double messages = 0;       // messages sent (active messages, or MPI sends)
  double bytes = 0;          // their argument and payload bytes
  double misses = 0;         // coherence misses (TSM/XSM: read and write misses, upgrades)
  double invalidations = 0;  // invalidations sent by homes
  double lock_waits = 0;     // lock requests that had to queue (the lock in use, or kept, elsewhere)
};

struct RunFigures {
  std::string app;      // "unstructured", "moldyn", "dsmc"
  std::string version;  // "chaos", "tsm_initial", ..., "mpi"
  int nodes = 1;
  double time_s = 0;  // the timed region (the computation, not input generation or checking)
  RunCounts counts;
  bool checksum_ok = false;
  // The sequential reference's time, timed as its own program times it, when this process ran
  // it for the check (0: not run).
  double seq_time_s = 0;
};

// Adds app, version, nodes, time_s, messages, bytes, misses, invalidations, lock_waits and
// checksum_ok under those names; and seq_time_s and speedup (seq_time_s / time_s) when the
// sequential reference's time is known.
void add_run_figures(Figures& figures, const RunFigures& run);

}  // namespace squall::apps
