// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Sizes of the TSM and XSM receive buffers, in particles per step. The gas crosses a block's
// side at about density x drift (under 12 x 0.6 per side cell per step, the jet's), so 32 per
// side cell leaves a wide margin; far moves (past a neighbour, or diagonal) are rare. A buffer
// that overflows ends the run with a message naming it, never corrupts it.
#include <cstddef>

#include "squall/apps/dsmc/parallel/block_partition.hpp"

namespace squall::apps::dsmc {

inline std::size_t neighbour_capacity(const BlockPartition& partition) { return 32 * partition.largest_side_cells(); }
inline std::size_t far_capacity(const BlockPartition& partition) { return 8 * partition.largest_side_cells(); }

}  // namespace squall::apps::dsmc
