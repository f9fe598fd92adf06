// SPDX-License-Identifier: BSD-3-Clause
// Partitioners: data partitioners (which node owns each element) and iteration
// partitioners (which node runs each loop iteration).
#pragma once
#include <span>
#include <vector>

#include <squall/chaos/translation_table.hpp>
#include <squall/chaos/types.hpp>

namespace squall::chaos {

// Balance of a partition (the same figures on every node).
struct partition_quality {
  int parts = 0;
  index min_elements = 0, max_elements = 0;  // per part
  double min_weight = 0, max_weight = 0;     // per part (weights 1 when none were given)
  double imbalance = 0;                      // max_weight / average weight per part
};

struct partition_result {
  std::vector<int> owner;  // the part (node) of each of this node's elements, in local order
  partition_quality quality;
};

// Collective. Recursive coordinate bisection: splits along the longest extent of the
// bounding box, recursively, so that parts hold equal weight. `coords` holds `dim` (1..3)
// coordinates per element of this node, interleaved; `weights` one per element, or none
// (then unweighted parts differ by at most one element). `parts` 0 means nodes(). Asking
// for more parts than elements is a usage_error.
partition_result rcb(std::span<const double> coords, int dim, std::span<const double> weights = {},
                     int parts = 0);

// Collective. Recursive inertial bisection: like rcb, but each cut is orthogonal to the
// principal axis of inertia of the elements being split.
partition_result rib(std::span<const double> coords, int dim, std::span<const double> weights = {},
                     int parts = 0);

// Collective. Graph partitioning with METIS (k-way, minimising cut edges). This node's
// vertices are table.owned(); vertex table.owned()[i] is adjacent to the global vertices
// adjacency[offsets[i] .. offsets[i+1]) (each edge listed from both ends).
partition_result graph_partition(const translation_table& table, std::span<const index> offsets,
                                 std::span<const index> adjacency, std::span<const double> weights = {},
                                 int parts = 0);

// Cut-edge figures of the distribution `table` describes, for the edges this node lists
// (each edge listed on one node only). Collective: totals over all nodes.
struct cut_figures {
  index edges = 0, cut = 0;
  double fraction() const { return edges == 0 ? 0.0 : static_cast<double>(cut) / static_cast<double>(edges); }
};
cut_figures cut_edges(const translation_table& table, std::span<const index> edge_from, std::span<const index> edge_to);

// Iteration partitioners. Iteration i of this node references the global elements
// refs[offsets[i] .. offsets[i+1]) of the arrays `table` distributes (its first reference is
// the one it writes). owner_computes gives it to the owner of that first reference;
// almost_owner_computes to the node owning most of its references, ties going to the
// least-loaded node so far. Returns a node per iteration; move the iterations with
// scatter_append.
enum class iteration_rule { owner_computes, almost_owner_computes };
std::vector<int> partition_iterations(const translation_table& table, std::span<const index> offsets,
                                      std::span<const index> refs, iteration_rule rule);

}  // namespace squall::chaos
