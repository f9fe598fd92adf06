// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Particles and the compressed cell-to-particle lists (compressed sparse rows: the particles of
// cell c are particles[start[c]] .. particles[start[c+1] - 1], in increasing id order).
//
// A particle's id says where it came from: the step it entered (0 for the initial gas), the
// cell or inflow source that made it, and its number there. Ids are therefore unique and
// independent of how work is divided, and ordering each cell's list by id makes the lists,
// and so every collision draw, the same in any parallel version.
#include <cstdint>
#include <vector>

#include "squall/apps/vec3.hpp"

namespace squall::apps::dsmc {

struct Particle {
  std::uint64_t id;
  Vec3 position;
  Vec3 velocity;
};

inline std::uint64_t particle_id(std::uint32_t step, std::uint32_t source, std::uint32_t number) {
  return (std::uint64_t{step} << 40) | (std::uint64_t{source} << 8) | number;
}
inline constexpr std::uint32_t kMaxParticlesPerSource = 256;

struct CellLists {
  std::vector<Particle> particles;
  std::vector<std::uint32_t> start;  // cell_count + 1 entries
};

}  // namespace squall::apps::dsmc
