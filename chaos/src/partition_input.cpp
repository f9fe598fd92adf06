// SPDX-License-Identifier: BSD-3-Clause
// Input checks of the partitioners, and gathering the points of the geometric ones.
#include <cmath>
#include <string>

#include <squall/chaos/exchange.hpp>
#include <squall/runtime.hpp>

#include "agreement.hpp"
#include "partition_support.hpp"

namespace squall::chaos::detail {

int parts_wanted(int parts, std::string& problem) {
  if (parts < 0) {
    problem = "the number of parts must not be negative (got " + std::to_string(parts) + ")";
    return 0;
  }
  return parts == 0 ? squall::nodes() : parts;
}

namespace {

// What each node tells the others before the points themselves.
struct point_header {
  index elements;
  int dim;
  int parts;
  int weighted;
};

std::string check_points(std::span<const double> coords, int dim, std::span<const double> weights) {
  if (dim < 1 || dim > 3) return "dim must be 1, 2 or 3 (got " + std::to_string(dim) + ")";
  if (coords.size() % static_cast<std::size_t>(dim) != 0) {
    return "coords holds " + std::to_string(coords.size()) + " values, not a multiple of dim " + std::to_string(dim);
  }
  const std::size_t n = coords.size() / static_cast<std::size_t>(dim);
  if (!weights.empty() && weights.size() != n) {
    return "weights holds " + std::to_string(weights.size()) + " values for " + std::to_string(n) +
           " elements (give one per element, or none)";
  }
  for (std::size_t i = 0; i < coords.size(); ++i) {
    if (!std::isfinite(coords[i])) return "coordinate " + std::to_string(i) + " is not finite";
  }
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (!(weights[i] >= 0) || !std::isfinite(weights[i])) {
      return "weight " + std::to_string(i) + " is " + std::to_string(weights[i]) +
             " (weights must be finite and not negative)";
    }
  }
  return {};
}

}  // namespace

gathered_points gather_points(const char* who, std::span<const double> coords, int dim,
                              std::span<const double> weights, int parts) {
  std::string problem = check_points(coords, dim, weights);
  const int k = parts_wanted(parts, problem);
  agree_or_throw(problem, who);

  gathered_points points;
  points.dim = dim;
  points.parts = k;
  points.mine = static_cast<index>(coords.size()) / dim;
  const point_header mine{points.mine, dim, k, weights.empty() ? 0 : 1};
  const std::vector<point_header> all = allgather(std::span<const point_header>(&mine, 1));

  // Every node sees the same headers, so these throw on every node alike.
  index total = 0;
  bool weighted = false;
  for (const point_header& h : all) weighted = weighted || h.weighted;
  for (std::size_t node = 0; node < all.size(); ++node) {
    const point_header& h = all[node];
    const std::string at = std::string(who) + ": node " + std::to_string(node);
    if (h.dim != dim || h.parts != k) {
      throw usage_error(at + " was called with dim " + std::to_string(h.dim) + " and " + std::to_string(h.parts) +
                        " parts, node " + std::to_string(squall::node()) + " with dim " + std::to_string(dim) +
                        " and " + std::to_string(k) + " parts (every node must pass the same)");
    }
    if (weighted && !h.weighted && h.elements > 0) {
      throw usage_error(at + " gave no weights while other nodes did (give them on every node, or on none)");
    }
    if (static_cast<int>(node) < squall::node()) points.first_mine += h.elements;
    total += h.elements;
  }
  if (total < k) {
    throw usage_error(std::string(who) + ": " + std::to_string(k) + " parts asked for " +
                      std::to_string(total) + " elements (at most one part per element)");
  }

  points.coords = allgather(coords);
  if (weighted) points.weights = allgather(weights);
  return points;
}

}  // namespace squall::chaos::detail
