// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The options every DSMC program takes, the sequential reference and each parallel version
// (same names, same defaults), checked before anything is generated.
#include <cstdint>

#include "squall/apps/dsmc/config.hpp"
#include "squall/apps/options.hpp"

namespace squall::apps::dsmc {

// The largest problem the programs take: 2^21 cells, 216 times the paper's 9,720, and 2^25
// particles to start (1.8 GiB of them; the gas about doubles as the jet fills the box).
// Before, --cells 2000 2000 2000 ran until memory ran out.
inline constexpr std::uint64_t kMaxCells = std::uint64_t{1} << 21;
inline constexpr std::uint64_t kMaxInitialParticles = std::uint64_t{1} << 25;

// --cells, --per-cell, --steps and --seed; throws OptionError naming the option and the
// value. The caller reads its own options and calls finish().
DsmcConfig read_dsmc_config(Options& options);

}  // namespace squall::apps::dsmc
