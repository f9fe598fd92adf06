// SPDX-License-Identifier: BSD-3-Clause
// A cheap clock for timing every entry method (load balancing): the time-stamp counter
// where there is one (about 10 ns a read here, against 23 for clock_gettime), converted to
// seconds at a rate measured against the steady clock since the first read.
#pragma once
#include <cstdint>

#include <squall/am.hpp>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace squall::arrays::detail {

inline std::uint64_t ticks() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return static_cast<std::uint64_t>(am::clock_ns());
#endif
}

// Seconds per tick (measured over at least 10 ms since the first call).
double seconds_per_tick();

}  // namespace squall::arrays::detail
