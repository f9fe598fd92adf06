// SPDX-License-Identifier: BSD-3-Clause
// What the partitioners share: the gathered points of the geometric partitioners, recursive
// bisection, the balance figures and the call to METIS.
#pragma once
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <squall/chaos/partition.hpp>

namespace squall::chaos::detail {

// `parts` as the caller gave it: 0 means nodes(); negative is a problem (returned in `problem`).
int parts_wanted(int parts, std::string& problem);

// The figures of a partition given every element's part, and its weight (none: weights 1).
partition_quality quality_of(std::span<const int> owner, std::span<const double> weights, int parts);

// Every node's points, concatenated in node order, on every node. Element e of the gathered
// list is identified by e: this is what breaks ties between equal coordinates, so every
// node computes the same partition.
struct gathered_points {
  int dim = 0;
  int parts = 0;                // resolved (never 0)
  std::vector<double> coords;   // dim per element
  std::vector<double> weights;  // one per element, or empty
  index first_mine = 0;         // this node's first element in the gathered list
  index mine = 0;               // and how many it has
  index size() const { return static_cast<index>(coords.size()) / dim; }
};

// Collective. Checks the input of rcb/rib (every node throws if one node finds a problem;
// `who`, e.g. "chaos::rcb", names the caller), resolves `parts` and gathers the points.
gathered_points gather_points(const char* who, std::span<const double> coords, int dim,
                              std::span<const double> weights, int parts);

// The key a bisection sorts a group of elements by: fills key[i] for element group[i].
using bisection_key = std::function<void(const gathered_points& points, std::span<const index> group,
                                         std::span<double> key)>;

// Recursive bisection of all the gathered points into points.parts parts: a group of k parts
// is ordered by `key` (ties by element identity) and cut between its first k/2 parts and the
// rest. Unweighted, part p gets exactly N/parts elements, one more when p < N % parts, so
// part sizes differ by at most one; weighted, each cut gives the first k/2 parts the closest
// achievable share (k/2)/k of the group's weight, every part keeping at least one element.
// Returns the part of every gathered element.
std::vector<int> recursive_bisection(const gathered_points& points, const bisection_key& key);

// rcb and rib: gather, bisect, and hand back this node's slice with the figures.
partition_result geometric_partition(const char* who, std::span<const double> coords, int dim,
                                     std::span<const double> weights, int parts, const bisection_key& key);

// The eigenvector of the largest eigenvalue of the symmetric n x n matrix `m` (row-major,
// n <= 3), of unit length, its largest component positive.
std::vector<double> principal_axis(std::vector<double> m, int n);

// A whole graph, as graph_partition assembles it on one node: vertex v is adjacent to
// adjacency[offsets[v] .. offsets[v+1]) (any order, repeats and self-loops allowed; edges
// listed from one end only are taken both ways).
struct whole_graph {
  std::vector<index> offsets;     // vertices + 1
  std::vector<index> adjacency;
  std::vector<double> weights;    // one per vertex, or empty
  index vertices() const { return static_cast<index>(offsets.size()) - 1; }
};

// METIS k-way partition of `graph` into parts >= 2 (a fixed seed: the same graph gives the
// same answer). Fills `part` (one per vertex) and returns "", or returns what went wrong.
std::string metis_kway(const whole_graph& graph, int parts, std::vector<int>& part);

}  // namespace squall::chaos::detail
