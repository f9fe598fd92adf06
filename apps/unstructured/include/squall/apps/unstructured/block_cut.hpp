// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// How badly a block partition of the node names cuts the mesh (the paper: 99% of edges cut).
#include <cstddef>

#include "squall/apps/unstructured/mesh.hpp"

namespace squall::apps::unstructured {

// Part of `node` when `node_count` names are split into `parts` contiguous blocks of
// ceil(node_count / parts) names.
std::size_t block_owner(NodeId node, std::size_t node_count, std::size_t parts);

// Percentage of edges whose two nodes fall in different blocks.
double block_cut_percent(const Mesh& mesh, std::size_t parts);

}  // namespace squall::apps::unstructured
