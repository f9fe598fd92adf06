// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The TSM and XSM versions' positions: one shared array under stache (the molecules renamed
// by RCB, each block homed at the owner of its first molecule). publish() writes this node's
// molecules and ends with a barrier; the list loop and the force loop read any molecule.
#include <cstddef>
#include <span>

#include "squall/apps/moldyn/parallel/decomposition.hpp"

namespace squall::apps::moldyn {

class SharedPositions {
 public:
  SharedPositions(const Decomposition& d, int me, std::size_t block_size);  // collective
  ~SharedPositions();
  SharedPositions(const SharedPositions&) = delete;
  SharedPositions& operator=(const SharedPositions&) = delete;

  void publish(std::span<const Vec3> own);  // collective
  std::span<const Vec3> all() const { return {data_, size_}; }

 private:
  Vec3* data_;
  std::size_t size_, first_;
};

// Reads --block-size (default 4096).
std::size_t read_block_size(Options& options);

}  // namespace squall::apps::moldyn
