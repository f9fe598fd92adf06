// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The options of every parallel version of unstructured: unstructured_seq's (same defaults,
// the paper's size) and, for the shared-memory versions, --block-size.
#include <cstddef>
#include <cstdint>

#include "squall/apps/options.hpp"

namespace squall::apps::unstructured {

struct RunOptions {
  std::size_t nodes = 0, iterations = 0, parts = 0;
  std::uint64_t seed = 0;
  std::size_t block_size = 0;  // 0 for versions without shared memory
  bool json = false;
};

// Reads the options and calls finish(); throws OptionError naming a bad one (--block-size:
// Options::block_size, a power of two from 4096 bytes to 64 MiB), or when the mesh --nodes makes has fewer nodes than
// `parts`, the job's nodes (or MPI processes): every version gives each one a part of at least
// one mesh node (CHAOS's RCB and the MPI version's cannot make an empty part).
RunOptions read_run_options(Options& options, bool with_block_size, std::size_t parts);

}  // namespace squall::apps::unstructured
