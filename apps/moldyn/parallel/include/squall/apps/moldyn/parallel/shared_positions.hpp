// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The TSM and XSM versions' positions: one shared array under stache (the molecules renamed
// by RCB, each block homed at the owner of its first molecule). publish() writes this node's
// molecules and ends with a barrier; the list loop and the force loop read any molecule.
//
// fetch_ahead(pairs): from then on publish() also fetches, after its barrier, every other
// node's block the pairs name (tsm::fetch: all requests at once, one round trip), and ends
// with a second barrier. The requests are then served while every node is inside publish(),
// polling; taken as misses in the force loop instead, each waits for a home that is computing
// to get a core (bench/tsm/README.md, tsm_busy_home). For the same reason publish() then
// starts with a barrier: its writes invalidate the copies the other nodes fetched, and each
// invalidation waits for its holder to answer.
//
// fetch_all(), before the list loop (which reads every molecule): every block at once, then a
// barrier, for the same reason. Taken as misses while the other nodes run their own list
// loops, a rebuild's misses took up to 100 ms where they take 2 ms, and serving them slowed
// the homes' list loops by a third (moldyn_xsm_bulk_reduction, 2 nodes on 2 cores).
#include <cstddef>
#include <span>
#include <vector>

#include <squall/tsm.hpp>

#include "squall/apps/moldyn/parallel/decomposition.hpp"

namespace squall::apps::moldyn {

class SharedPositions {
 public:
  SharedPositions(const Decomposition& d, int me, std::size_t block_size);  // collective
  ~SharedPositions();
  SharedPositions(const SharedPositions&) = delete;
  SharedPositions& operator=(const SharedPositions&) = delete;

  void publish(std::span<const Vec3> own);  // collective
  void fetch_ahead(std::span<const Pair> pairs);
  void fetch_all();  // collective
  std::span<const Vec3> all() const { return {data_, size_}; }

 private:
  Vec3* data_;
  std::size_t size_, first_, end_, block_size_;
  bool fetching_ = false;
  std::vector<tsm::byte_range> remote_ranges_;  // fetch_ahead's blocks, as runs of consecutive blocks
};

// Reads --block-size (default 4096).
std::size_t read_block_size(Options& options);

}  // namespace squall::apps::moldyn
