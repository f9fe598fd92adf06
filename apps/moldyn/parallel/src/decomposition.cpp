// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/moldyn/parallel/decomposition.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "squall/apps/moldyn/lattice_generator.hpp"
#include "squall/apps/moldyn/options.hpp"

namespace squall::apps::moldyn {
namespace {

double coordinate(const Vec3& v, int axis) { return axis == 0 ? v.x : axis == 1 ? v.y : v.z; }

// Splits `ids` into `parts` parts of sizes proportional to the parts' counts, cutting across
// the longest side of the parts' bounding box; appends the parts' ids to `out` in part order.
void bisect(std::vector<std::uint32_t> ids, int parts, std::span<const Vec3> position,
            std::vector<std::vector<std::uint32_t>>& out) {
  if (parts == 1) {
    std::sort(ids.begin(), ids.end());
    out.push_back(std::move(ids));
    return;
  }
  int axis = 0;
  double longest = -1;
  for (int a = 0; a < 3; ++a) {
    const auto [lo, hi] = std::minmax_element(ids.begin(), ids.end(), [&](std::uint32_t i, std::uint32_t j) {
      return coordinate(position[i], a) < coordinate(position[j], a);
    });
    const double extent = ids.empty() ? 0 : coordinate(position[*hi], a) - coordinate(position[*lo], a);
    if (extent > longest) longest = extent, axis = a;
  }
  const int left = parts / 2;
  const std::size_t cut = ids.size() * static_cast<std::size_t>(left) / static_cast<std::size_t>(parts);
  // Ties broken by name so that every node cuts alike.
  std::nth_element(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(cut), ids.end(),
                   [&](std::uint32_t i, std::uint32_t j) {
                     const double ci = coordinate(position[i], axis), cj = coordinate(position[j], axis);
                     return ci < cj || (ci == cj && i < j);
                   });
  std::vector<std::uint32_t> high(ids.begin() + static_cast<std::ptrdiff_t>(cut), ids.end());
  ids.resize(cut);
  bisect(std::move(ids), left, position, out);
  bisect(std::move(high), parts - left, position, out);
}

}  // namespace

ParallelOptions read_moldyn_options(Options& options) {
  ParallelOptions o;
  o.config = read_moldyn_config(options);
  o.json = options.flag("json");
  return o;
}

int Decomposition::owner(std::uint32_t molecule) const {
  return static_cast<int>(std::upper_bound(first.begin(), first.end(), molecule) - first.begin()) - 1;
}

Decomposition decompose(const MoldynConfig& config, int parts) {
  if (parts < 1) throw std::invalid_argument("moldyn: at least one part");
  Decomposition d;
  const Molecules input = generate_molecules(config.lattice);
  d.list_radius = first_list_radius(config, input);
  d.cutoff = d.list_radius - config.skin;
  if (input.size() < static_cast<std::size_t>(parts)) {
    throw OptionError("--cells " + std::to_string(config.lattice.cells[0]) + " makes " + std::to_string(input.size()) +
                      " molecules, too few to give each of the job's " + std::to_string(parts) +
                      " nodes (or MPI processes) one: give a larger --cells, or run on at most " +
                      std::to_string(input.size()));
  }

  std::vector<std::uint32_t> all(input.size());
  std::iota(all.begin(), all.end(), 0u);
  std::vector<std::vector<std::uint32_t>> by_part;
  bisect(std::move(all), parts, input.position, by_part);
  d.molecules.box = input.box;
  d.first.push_back(0);
  for (const auto& ids : by_part) {
    for (const std::uint32_t i : ids) {
      d.original.push_back(i);
      d.molecules.position.push_back(input.position[i]);
      d.molecules.velocity.push_back(input.velocity[i]);
    }
    d.first.push_back(static_cast<std::uint32_t>(d.original.size()));
  }
  d.molecules.force.assign(input.size(), Vec3{});
  return d;
}

std::vector<Pair> node_pairs(const Decomposition& d, int me, std::span<const Vec3> position, std::size_t& local) {
  const double radius2 = d.list_radius * d.list_radius;
  std::vector<Pair> pairs;
  append_pairs_within(d.part(me), position, d.molecules.box, radius2, pairs);
  local = pairs.size();
  for (int q = 0; q < d.parts(); ++q) {
    if (q == me) continue;
    const int lo = std::min(me, q), hi = std::max(me, q);
    const IndexRange rows = d.part(lo);
    const std::uint32_t mid = rows.begin + (rows.end - rows.begin) / 2;
    const IndexRange mine = me == lo ? IndexRange{rows.begin, mid} : IndexRange{mid, rows.end};
    append_pairs_between(mine, d.part(hi), position, d.molecules.box, radius2, pairs);
  }
  return pairs;
}

}  // namespace squall::apps::moldyn
