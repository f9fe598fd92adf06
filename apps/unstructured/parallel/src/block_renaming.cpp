// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/unstructured/block_renaming.hpp"

#include <algorithm>
#include <span>
#include <stdexcept>

#include <squall/chaos/exchange.hpp>
#include <squall/squall.hpp>

namespace squall::apps::unstructured {

BlockRenaming::BlockRenaming(const squall::chaos::translation_table& table, std::size_t block_size)
    : block_size_(block_size),
      element_(static_cast<std::size_t>(table.global_size()), -1),
      first_(static_cast<std::size_t>(squall::nodes()) + 1, 0) {
  if (block_size < sizeof(double) || block_size % sizeof(double) != 0) {
    throw std::invalid_argument("unstructured: the block size must be a multiple of 8 bytes");
  }
  // A run of block_size / 8 elements is one block of doubles and five of NodeValues.
  const auto run = static_cast<std::int64_t>(block_size / sizeof(double));
  const std::int64_t mine = table.local_size();
  const std::vector<std::int64_t> counts = squall::chaos::allgather(std::span<const std::int64_t>(&mine, 1));
  const std::vector<std::int64_t> owned = squall::chaos::allgather(table.owned());
  std::size_t at = 0;
  for (std::size_t p = 0; p + 1 < first_.size(); ++p) {
    for (std::int64_t k = 0; k < counts[p]; ++k) element_[static_cast<std::size_t>(owned[at++])] = first_[p] + k;
    first_[p + 1] = first_[p] + (counts[p] + kRoom + run - 1) / run * run;
  }
}

squall::memory::home_policy BlockRenaming::homes(std::size_t element_bytes) const {
  return squall::memory::home_policy::function([this, element_bytes](squall::memory::block_index b) {
    const auto element = static_cast<std::int64_t>(b * block_size_ / element_bytes);
    const auto after = std::upper_bound(first_.begin(), first_.end() - 1, element);
    return static_cast<int>(after - first_.begin()) - 1;
  });
}

}  // namespace squall::apps::unstructured
