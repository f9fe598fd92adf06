// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The options every moldyn program takes, the sequential reference and each parallel version
// (same names, same defaults), checked before anything is generated.
#include <cstdint>

#include "squall/apps/moldyn/sequential.hpp"
#include "squall/apps/options.hpp"

namespace squall::apps::moldyn {

// The largest problem the programs take. 64 cells a side make 1,048,576 molecules, 119 times
// the paper's 8,788: choosing the list radius tests every pair of molecules (on every node),
// which at 26 cells a side already takes 36 s (before, 100000 cells ran until memory ran out).
// 2^27 pairs in the first list, 134 times the paper's 10^6, take about 2 GiB with the
// candidates the radius is chosen from.
inline constexpr int kMaxCells = 64;
inline constexpr std::uint64_t kMaxInteractions = std::uint64_t{1} << 27;

// --cells, --interactions, --steps, --rebuild-every and --seed; throws OptionError naming
// the option and the value. The caller reads its own options and calls finish().
MoldynConfig read_moldyn_config(Options& options);

}  // namespace squall::apps::moldyn
