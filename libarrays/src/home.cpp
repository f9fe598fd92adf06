// SPDX-License-Identifier: BSD-3-Clause
// Home maps (squall/arrays/home.hpp).
#include <squall/arrays/home.hpp>
#include <squall/error.hpp>

#include <string>

namespace squall::arrays {

int home_map::home_of(const key& k, int nodes) const {
  if (nodes < 1) throw usage_error("home_of: " + std::to_string(nodes) + " nodes");
  int home = f_ ? f_(k, nodes) : static_cast<int>(k.hash() % static_cast<std::uint64_t>(nodes));
  if (home < 0 || home >= nodes)
    throw usage_error("home map: node " + std::to_string(home) + " is not one of the job's " + std::to_string(nodes));
  return home;
}

home_map hash_home() { return home_map(); }

home_map user_home(home_map::function f) {
  if (!f) throw usage_error("user_home: an empty function");
  return home_map(std::move(f));
}

namespace detail {

std::int64_t block_count(const std::int32_t* bounds, int n) {
  std::int64_t count = 1;
  for (int d = 0; d < n; ++d) {
    if (bounds[d] < 1) throw usage_error("block_home: bound " + std::to_string(bounds[d]) + " in dimension " + std::to_string(d));
    if (__builtin_mul_overflow(count, std::int64_t{bounds[d]}, &count))
      throw usage_error("block_home: the bounds hold more than 2^63 elements");
  }
  return count;
}

std::int64_t block_position(const std::int32_t* i, const std::int32_t* bounds, int n) {
  std::int64_t position = 0;
  for (int d = 0; d < n; ++d) {
    if (i[d] < 0 || i[d] >= bounds[d])
      throw usage_error("block_home: index " + std::to_string(i[d]) + " in dimension " + std::to_string(d) +
                        " is outside [0, " + std::to_string(bounds[d]) + ")");
    position = position * bounds[d] + i[d];  // < count, which fits
  }
  return position;
}

int block_of(std::int64_t position, std::int64_t count, int nodes) {
  // The first `extra` nodes hold q+1 positions each, the rest q (q may be 0).
  std::int64_t q = count / nodes, extra = count % nodes;
  std::int64_t in_large = extra * (q + 1);
  if (position < in_large) return static_cast<int>(position / (q + 1));
  return static_cast<int>(extra + (position - in_large) / q);
}

}  // namespace detail

}  // namespace squall::arrays
