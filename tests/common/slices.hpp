// SPDX-License-Identifier: BSD-3-Clause
// Node k's share of `count` items split among the job's nodes: contiguous, as equal as they
// can be, and together covering every item whatever the node count (3 nodes do not divide a
// page's 512 words).
#pragma once
#include <cstddef>

#include <squall/squall.hpp>

namespace squall::test {

struct slice {
  std::size_t from = 0, to = 0;  // [from, to)
};

inline slice slice_of(std::size_t count, int k = squall::node(), int parts = squall::nodes()) {
  const auto n = static_cast<std::size_t>(parts), i = static_cast<std::size_t>(k);
  return {count * i / n, count * (i + 1) / n};
}

}  // namespace squall::test
