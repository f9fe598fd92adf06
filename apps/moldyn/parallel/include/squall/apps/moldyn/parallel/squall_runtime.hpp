// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The driver's Runtime on Squall: collectives, and the timed region as a CountedRegion
// (Squall's messages, bytes, misses, invalidations and lock waits summed over the nodes).
#include "squall/apps/moldyn/parallel/driver.hpp"

namespace squall::apps::moldyn {

Runtime squall_runtime();

// The home of block b of an array of `element_size`-byte elements whose element k belongs to
// molecule k / per_molecule: the owner of the block's first molecule.
int home_of_block(const Decomposition& d, std::size_t block, std::size_t block_size, std::size_t element_size,
                  std::size_t per_molecule);

}  // namespace squall::apps::moldyn
