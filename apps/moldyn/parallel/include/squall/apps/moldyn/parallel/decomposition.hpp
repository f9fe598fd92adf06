// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// What every parallel moldyn version shares (no runtime): the options, the input renamed so
// that each node's RCB part of the molecules is one run of names, and each node's share of
// the interaction-list loop.
//
// Partition: recursive coordinate bisection of the initial positions into `parts` parts
// (computed alike on every node, so MPI and the Squall versions use the same one). Node p
// owns molecules [first[p], first[p + 1]).
//
// List loop: node p builds the pairs within its own part (local pairs), and for each other
// node q the pairs between the lower-numbered part's molecules (split in two halves of rows)
// and the higher part: the lower node takes the first half of the rows, the higher node the
// second. Every cut pair is built by one of its two owners and the loop's work is even.
#include <span>
#include <string>
#include <vector>

#include "squall/apps/moldyn/interaction_list.hpp"
#include "squall/apps/moldyn/sequential.hpp"
#include "squall/apps/options.hpp"

namespace squall::apps::moldyn {

// The sequential program's options (same names, same defaults) and --json.
struct ParallelOptions {
  MoldynConfig config;
  bool json = false;
};
// Reads the sequential options; the caller reads its own and calls finish().
ParallelOptions read_moldyn_options(Options& options);

struct Decomposition {
  Molecules molecules;                 // the input, renamed (molecule k is original[k])
  std::vector<std::uint32_t> original;  // renamed -> original name
  std::vector<std::uint32_t> first;     // per part, and first[parts] = molecules
  double list_radius = 0, cutoff = 0;

  int parts() const { return static_cast<int>(first.size()) - 1; }
  IndexRange part(int p) const { return {first[static_cast<std::size_t>(p)], first[static_cast<std::size_t>(p) + 1]}; }
  int owner(std::uint32_t molecule) const;
};

// Generates the input, chooses the list radius (as run_moldyn does) and renames by RCB.
Decomposition decompose(const MoldynConfig& config, int parts);

// Node `me`'s pairs of the list: the local pairs (both ends in its part) first, then the cut
// pairs; `local` receives how many are local.
std::vector<Pair> node_pairs(const Decomposition& d, int me, std::span<const Vec3> position, std::size_t& local);

}  // namespace squall::apps::moldyn
