// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/counter_rng.hpp"

#include <Random123/philox.h>

#include <cmath>
#include <numbers>
#include <stdexcept>

namespace squall::apps {
namespace {

// The draw-block index shares the last counter word with the stream tag.
constexpr unsigned kBlockBits = 24;

}  // namespace

std::array<std::uint32_t, 4> philox4x32_10(std::array<std::uint32_t, 4> counter,
                                           std::array<std::uint32_t, 2> key) {
  const r123::Philox4x32_R<10> philox;
  const auto out = philox({{counter[0], counter[1], counter[2], counter[3]}}, {{key[0], key[1]}});
  return {out[0], out[1], out[2], out[3]};
}

KeyedRandom::KeyedRandom(std::uint64_t seed, Stream stream, std::uint64_t entity,
                         std::uint32_t step)
    : key_{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)},
      counter_{static_cast<std::uint32_t>(entity), static_cast<std::uint32_t>(entity >> 32), step,
               static_cast<std::uint32_t>(stream) << kBlockBits} {}

void KeyedRandom::refill() {
  block_ = philox4x32_10(counter_, key_);
  const std::uint32_t block_index = counter_[3] & ((1u << kBlockBits) - 1);
  if (block_index + 1 == (1u << kBlockBits)) {
    throw std::length_error("KeyedRandom: more than 2^24 blocks drawn for one entity and step");
  }
  ++counter_[3];
  used_ = 0;
}

std::uint32_t KeyedRandom::next_u32() {
  if (used_ == 4) refill();
  return block_[used_++];
}

std::uint64_t KeyedRandom::next_u64() {
  const std::uint64_t high = next_u32();
  return (high << 32) | next_u32();
}

double KeyedRandom::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double KeyedRandom::uniform_open() {
  return (static_cast<double>(next_u64() >> 11) + 1.0) * 0x1.0p-53;
}

double KeyedRandom::normal() {
  const double radius = std::sqrt(-2.0 * std::log(uniform_open()));
  return radius * std::cos(2.0 * std::numbers::pi * uniform());
}

std::uint32_t KeyedRandom::below(std::uint32_t bound) {
  // Lemire's multiply-and-reject: exact uniformity without a division per draw.
  std::uint64_t product = std::uint64_t{next_u32()} * bound;
  auto low = static_cast<std::uint32_t>(product);
  if (low < bound) {
    const std::uint32_t threshold = static_cast<std::uint32_t>(-bound) % bound;
    while (low < threshold) {
      product = std::uint64_t{next_u32()} * bound;
      low = static_cast<std::uint32_t>(product);
    }
  }
  return static_cast<std::uint32_t>(product >> 32);
}

std::uint32_t KeyedRandom::poisson(double mean, std::uint32_t cap) {
  const double limit = std::exp(-mean);
  std::uint32_t count = 0;
  for (double product = uniform_open(); product > limit && count < cap; product *= uniform_open()) {
    ++count;
  }
  return count;
}

}  // namespace squall::apps
