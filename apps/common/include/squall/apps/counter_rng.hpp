// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Counter-based random numbers (Philox4x32-10, Salmon et al., SC'11).
//
// A draw is a pure function of (seed, stream, entity, step, draw index): a stream of numbers
// belongs to the thing it is drawn for (a particle, a cell, a molecule at a step), never to the
// order in which work happens. A parallel version that draws for the same entity and step gets
// the same numbers as the sequential one, whichever node does the work and in whatever order.
#include <array>
#include <cstdint>

namespace squall::apps {

// Philox4x32 with 10 rounds (Random123's, from Debian's librandom123-dev): a bijection of a
// 128-bit counter under a 64-bit key.
std::array<std::uint32_t, 4> philox4x32_10(std::array<std::uint32_t, 4> counter,
                                           std::array<std::uint32_t, 2> key);

// What a stream of draws is used for; keeps, e.g., a particle's inflow draws independent of
// its collision draws even where entity and step coincide.
enum class Stream : std::uint32_t {
  kMeshJitter = 1,
  kMeshShuffle,
  kMoleculeJitter,
  kMoleculeVelocity,
  kParticleInit,
  kCollision,
  kInflow,
  kTest = 255,
};

class KeyedRandom {
 public:
  // `entity` names what the draws belong to, `step` the time step (0 outside a time loop).
  KeyedRandom(std::uint64_t seed, Stream stream, std::uint64_t entity, std::uint32_t step = 0);

  std::uint32_t next_u32();
  std::uint64_t next_u64();
  double uniform();            // [0, 1), 53 random bits
  double uniform_open();       // (0, 1]
  double normal();             // standard normal (Box-Muller)
  std::uint32_t below(std::uint32_t bound);  // uniform in [0, bound), unbiased; bound > 0
  // Poisson-distributed count by Knuth's product method: meant for small means (< 30);
  // the result is capped at `cap`.
  std::uint32_t poisson(double mean, std::uint32_t cap);

 private:
  void refill();

  std::array<std::uint32_t, 2> key_;
  std::array<std::uint32_t, 4> counter_;
  std::array<std::uint32_t, 4> block_{};
  unsigned used_ = 4;  // words of block_ already handed out
};

}  // namespace squall::apps
