// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// A 64-bit FNV-1a hash of a program's final state, fed in a fixed order.
//
// Floating-point values are quantised (rounded to a multiple of a stated quantum) before
// hashing, so the checksum names the state to that resolution. The sequential programs do all
// their arithmetic in a fixed order without -ffast-math, so their checksums are identical across
// optimisation levels; a parallel version whose reductions add in another order may differ in
// the last bits and should also compare the printed physical totals within a tolerance.
#include <cstdint>
#include <string>

namespace squall::apps {

class Checksum {
 public:
  void add(std::uint64_t value);
  void add_quantised(double value, double quantum);

  std::uint64_t value() const { return hash_; }
  std::string hex() const;  // 16 lowercase hex digits

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ull;  // FNV-1a offset basis
};

}  // namespace squall::apps
