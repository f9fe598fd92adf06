// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Lennard-Jones forces over a given pair list, truncated at the cut-off and shifted so that
// the potential is continuous there. Each pair adds its force into both molecules (the same
// reduction pattern as unstructured's edges); a parallel version passes its own pairs.
#include <span>

#include "squall/apps/moldyn/molecules.hpp"

namespace squall::apps::moldyn {

class LennardJones {
 public:
  explicit LennardJones(double cutoff);

  double cutoff() const { return cutoff_; }
  // Adds the forces of the pairs closer than the cut-off into `force`; returns their
  // potential energy.
  double accumulate_forces(std::span<const Pair> pairs, std::span<const Vec3> position,
                           const Vec3& box, std::span<Vec3> force) const;

 private:
  double cutoff_, cutoff2_, shift_;
};

}  // namespace squall::apps::moldyn
