// SPDX-License-Identifier: BSD-3-Clause
// Home policies: which node is home to each block.
#include <squall/error.hpp>
#include <squall/memory.hpp>

#include "memory/segment_builder.hpp"

namespace squall::memory {

home_policy home_policy::round_robin() { return {kind::round_robin, nullptr}; }
home_policy home_policy::partition() { return {kind::partition, nullptr}; }
home_policy home_policy::function(std::function<int(block_index)> home_of) {
  if (!home_of) throw usage_error("home_policy::function needs a function");
  return {kind::function, std::move(home_of)};
}

void segment_builder::set_homes(detail::segment_state& s, const home_policy& policy) {
  using detail::home_kind;
  s.home_table.clear();
  switch (policy.kind_) {
    case home_policy::kind::round_robin:
      s.homes = home_kind::round_robin;
      return;
    case home_policy::kind::partition:
      s.homes = home_kind::partition;
      s.blocks_per_node = (s.blocks + static_cast<std::size_t>(s.nodes) - 1) / static_cast<std::size_t>(s.nodes);
      return;
    case home_policy::kind::function:
      break;
  }
  s.homes = home_kind::function;
  s.home_table.resize(s.blocks);
  for (block_index b = 0; b < s.blocks; ++b) s.home_table[b] = policy.home_of_(b);
}

}  // namespace squall::memory
