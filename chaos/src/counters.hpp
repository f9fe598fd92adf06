// SPDX-License-Identifier: BSD-3-Clause
// The library's counters ("chaos.*" in squall::stats).
#pragma once
#include <cstddef>
#include <cstdint>

namespace squall::chaos::detail {

// A message of the library's own (an exchange or a schedule execution) and its bytes.
void count_message(std::size_t bytes);
void count_elements(std::size_t n);        // elements moved by schedule executions
void count_execution();                    // one schedule execution ended
void count_early_message();                // arrived before its execution began here (kept, copied)
void count_inspector_ns(std::uint64_t ns);  // time spent building schedules
void count_lookups(std::size_t n, std::size_t requests);  // translation-table lookups, request messages

}  // namespace squall::chaos::detail
