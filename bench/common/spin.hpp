// SPDX-License-Identifier: BSD-3-Clause
// The floors' spin on a flag that the other process of the pair writes.
#pragma once
#include <sched.h>

namespace squall::bench {

// Spins with `pause` until done() holds, and gives the processor away after 2048 pauses
// without it (about 0.1 ms): on a machine with more busy threads than cores the other
// process may be off its core, and a spin that only paused waited a scheduler slice for each
// flip (the demonstration's 2-node am_pingpong ran over a minute at 16 tests at a time; 0.2 s
// on a quiet machine). On a quiet machine a flip takes well under the bound, so what the
// floor measures is unchanged. Async-signal-safe (remote_floor's fault handler spins too).
template <class Done>
inline void spin_until(Done done) {
  unsigned pauses = 0;
  while (!done()) {
    __builtin_ia32_pause();
    if (++pauses == 2048) {
      pauses = 0;
      sched_yield();
    }
  }
}

}  // namespace squall::bench
