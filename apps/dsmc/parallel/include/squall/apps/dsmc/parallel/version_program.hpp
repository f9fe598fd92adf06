// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// What every parallel DSMC program shares apart from its runtime: the options (dsmc_seq's plus
// --block-size for TSM/XSM), the check of the gathered final state against the sequential
// reference computed in the same process, and the report (readable lines, --json last).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "squall/apps/dsmc/config.hpp"
#include "squall/apps/dsmc/particles.hpp"
#include "squall/apps/figures.hpp"
#include "squall/apps/options.hpp"
#include "squall/apps/run_report.hpp"

namespace squall::apps::dsmc {

struct VersionOptions {
  DsmcConfig config;
  std::size_t block_size = 4096;  // TSM/XSM only
  bool json = false;
};

std::string version_usage(const std::string& program, bool block_size);
VersionOptions read_version_options(Options& options, bool block_size);

struct FinalCheck {
  bool ok = false;
  std::string checksum, reference;
  std::size_t particles = 0;
  double reference_seconds = 0;  // run_dsmc's steps, as dsmc_seq times them (input generation left out)
};
// Node 0: every node's final particles (any order) against run_dsmc's final state.
FinalCheck check_final_state(const DsmcConfig& config, std::vector<Particle> gathered);

struct VersionReport {
  RunFigures run;
  FinalCheck check;
  std::map<std::string, double> phase_seconds;  // slowest node's, per phase
  std::vector<std::pair<std::string, double>> extra;  // what the version adds
};
void print_report(const VersionReport& report, bool json);

}  // namespace squall::apps::dsmc
