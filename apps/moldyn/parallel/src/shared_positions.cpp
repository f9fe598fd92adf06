// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/moldyn/parallel/shared_positions.hpp"

#include <algorithm>

#include <squall/tsm.hpp>

#include "squall/apps/moldyn/parallel/squall_runtime.hpp"

namespace squall::apps::moldyn {

SharedPositions::SharedPositions(const Decomposition& d, int me, std::size_t block_size)
    : size_(d.molecules.size()), first_(d.part(me).begin), end_(d.part(me).end), block_size_(block_size) {
  const tsm::options opt{.block_size = block_size, .homes = memory::home_policy::function([&d, block_size](auto b) {
                           return home_of_block(d, b, block_size, sizeof(Vec3), 1);
                         })};
  data_ = tsm::alloc<Vec3>(size_, opt);
}

SharedPositions::~SharedPositions() { tsm::free(data_); }

void SharedPositions::publish(std::span<const Vec3> own) {
  // With fetching ahead, other nodes hold copies of this node's boundary blocks, so the copy
  // below invalidates them: wait until every node is here, where it answers at once, rather
  // than for a node still in its force loop.
  if (fetching_) tsm::barrier();
  std::copy(own.begin(), own.end(), data_ + first_);
  tsm::barrier();
  if (!fetching_) return;
  tsm::fetch(remote_ranges_);
  tsm::barrier();
}

void SharedPositions::fetch_all() {
  const tsm::byte_range everything[] = {{data_, size_ * sizeof(Vec3)}};
  tsm::fetch(everything);
  tsm::barrier();
}

void SharedPositions::fetch_ahead(std::span<const Pair> pairs) {
  // A block holding only this node's molecules is written here and needs no fetch.
  const std::size_t mine_first = first_ * sizeof(Vec3) / block_size_;
  const std::size_t mine_last = end_ == first_ ? mine_first : ((end_ * sizeof(Vec3)) - 1) / block_size_;
  const auto mine_only = [&](std::size_t b) {
    return b > mine_first && b < mine_last;  // the blocks at the ends may hold a neighbour's too
  };
  std::vector<std::size_t> remote_blocks;
  for (const Pair& p : pairs) {
    for (const std::uint32_t m : {p.i, p.j}) {
      if (m >= first_ && m < end_) continue;
      const std::size_t b = m * sizeof(Vec3) / block_size_;
      if (!mine_only(b)) remote_blocks.push_back(b);
    }
  }
  std::sort(remote_blocks.begin(), remote_blocks.end());
  remote_blocks.erase(std::unique(remote_blocks.begin(), remote_blocks.end()), remote_blocks.end());
  // Runs of consecutive blocks, one range each.
  remote_ranges_.clear();
  const auto* base = reinterpret_cast<const std::byte*>(data_);
  for (std::size_t k = 0; k < remote_blocks.size();) {
    std::size_t end = k + 1;
    while (end < remote_blocks.size() && remote_blocks[end] == remote_blocks[end - 1] + 1) ++end;
    remote_ranges_.push_back({base + remote_blocks[k] * block_size_, (end - k) * block_size_});
    k = end;
  }
  fetching_ = true;
}

static_assert(kMaxBlockSize == tsm::max_block_size, "apps' --block-size bound is libtsm's");

std::size_t read_block_size(Options& options) { return options.block_size(); }

}  // namespace squall::apps::moldyn
