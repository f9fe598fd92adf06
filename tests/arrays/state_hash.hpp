// SPDX-License-Identifier: BSD-3-Clause
// The checkpoint tests' element checksum: its name's hash and its doubles' bit patterns, so
// that any bit a checkpoint and restart lost shows in the reduction of every element's.
#pragma once
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace arrays_test {

inline std::uint64_t state_hash(const std::string& name, const std::vector<double>& state) {
  std::uint64_t h = std::hash<std::string>{}(name);
  for (double x : state) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    h = h * 1099511628211ULL + bits;
  }
  return h;
}

}  // namespace arrays_test
