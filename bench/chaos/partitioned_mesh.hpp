// SPDX-License-Identifier: BSD-3-Clause
// The mesh as the Squall benchmarks on it distribute it (chaos_exchange, xsm_reduction): every
// node starts with a block of node names and a block of edges; nodes are then partitioned by
// chaos::rcb and edges given to nodes by the paper's rule (almost-owner-computes).
#pragma once
#include <span>
#include <vector>

#include <squall/chaos/translation_table.hpp>

#include "exchange_input.hpp"

namespace squall::bench::chaos_exchange {

// An edge as it travels to the node that runs it.
struct edge_item {
  std::int64_t id, a, b;
};

// This node's share of the mesh before partitioning: a block of node names, a block of edges.
struct initial_block {
  squall::chaos::translation_table table;  // the block distribution of the nodes
  std::vector<double> coords;              // x, y, z of each owned node
  std::vector<edge_item> edges;            // edges [first, first + count) of the mesh's list
};

initial_block take_block(const mesh::Mesh& m);

// Moves each edge of the block to the node that will run it (the paper's rule). Collective.
std::vector<edge_item> assign_edges(const squall::chaos::translation_table& table, std::span<const edge_item> block);

}  // namespace squall::bench::chaos_exchange
