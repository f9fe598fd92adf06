// SPDX-License-Identifier: BSD-3-Clause
// Home maps: each index has a home node that always knows where its element is, or holds its
// messages until it knows (the paper's section 4.1; libarrays/PROTOCOL.md). Every node must
// compute the same home from the key alone, so a map is a pure function of (key, nodes).
//
//   hash_home()          key hash % nodes: the default, for any index type
//   block_home(bounds)   index<N> in [0, bounds) row-major, cut into `nodes` contiguous blocks
//   user_home(f)         the program's own function
#pragma once
#include <cstdint>
#include <functional>
#include <utility>

#include <squall/arrays/index.hpp>
#include <squall/arrays/key.hpp>

namespace squall::arrays {

class home_map {
 public:
  using function = std::function<int(const key&, int nodes)>;

  home_map() = default;  // hash_home
  explicit home_map(function f) : f_(std::move(f)) {}

  // The key's home in 0..nodes-1. Throws squall::usage_error for nodes < 1, or when the map
  // answers outside that range.
  int home_of(const key& k, int nodes) const;

 private:
  function f_;  // empty: hash_home
};

home_map hash_home();
home_map user_home(home_map::function f);

namespace detail {
// bounds' element count; throws unless every bound is positive and the count fits in 63 bits.
std::int64_t block_count(const std::int32_t* bounds, int n);
// Row-major position of i in bounds; throws when i is outside them.
std::int64_t block_position(const std::int32_t* i, const std::int32_t* bounds, int n);
// The block of `count` positions that holds `position`, cut into `nodes` blocks whose sizes
// differ by at most one, the larger first.
int block_of(std::int64_t position, std::int64_t count, int nodes);
}  // namespace detail

template <int N>
home_map block_home(const index<N>& bounds) {
  std::int64_t count = detail::block_count(bounds.at.data(), N);
  return home_map([bounds, count](const key& k, int nodes) {
    index<N> i = index_of<index<N>>(k);
    return detail::block_of(detail::block_position(i.at.data(), bounds.at.data(), N), count, nodes);
  });
}

}  // namespace squall::arrays
