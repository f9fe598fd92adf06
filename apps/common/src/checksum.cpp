// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/checksum.hpp"

#include <cmath>
#include <cstdio>

namespace squall::apps {

void Checksum::add(std::uint64_t value) {
  constexpr std::uint64_t kPrime = 0x100000001b3ull;
  for (int byte = 0; byte < 8; ++byte) {
    hash_ ^= (value >> (8 * byte)) & 0xffu;
    hash_ *= kPrime;
  }
}

void Checksum::add_quantised(double value, double quantum) {
  add(static_cast<std::uint64_t>(std::llround(value / quantum)));
}

std::string Checksum::hex() const {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash_));
  return text;
}

}  // namespace squall::apps
