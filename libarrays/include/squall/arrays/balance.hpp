// SPDX-License-Identifier: BSD-3-Clause
// Measurement-based load balancing (the paper's section 6; Charm++'s AtSync). The runtime
// times every entry method of every element of an array that measures its load; at_sync()
// is the synchronisation point: it gathers the loads (and, for metis, the messages between
// elements, when the array records them), decides where each element goes, and moves them.
// An array measures its load from its first at_sync on, or from measure_load() (the time
// before the first at_sync counts only then).
//
//   cells.measure_load();                         // the first step counts too
//   cells.record_communication();                 // for strategy::metis
//   ... iterations ...
//   auto r = arrays::at_sync(cells, arrays::strategy::refine);
#pragma once
#include <cstddef>
#include <cstdint>

namespace squall::arrays {

enum class strategy : std::uint8_t { greedy, refine, metis };

struct balance_report {
  std::size_t elements = 0;
  std::size_t migrations = 0;
  double max_before = 0, max_after = 0;  // the most loaded node's load, seconds
  double average = 0;                    // the nodes' mean load
};

namespace detail {
balance_report at_sync(std::uint32_t array, strategy how);
}

// Charm++'s AtSync, as one collective call. On every node's program thread, between phases:
// quiesces, gathers the elements' loads since the last at_sync, moves elements as `how`
// decides, quiesces again and starts a new measurement. Every node gets the same report.
template <class Array>
balance_report at_sync(const Array& a, strategy how) {
  return detail::at_sync(a.id(), how);
}

}  // namespace squall::arrays
