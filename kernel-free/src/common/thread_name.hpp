// SPDX-License-Identifier: BSD-3-Clause
// Names the calling thread (at most 15 characters), so that top -H, perf and /proc tell the
// runtime's threads from the program's: squall-progress, squall-watchdog, squall-ucx-io,
// squall-tcp-io, squall-faults.
#pragma once
#include <pthread.h>

namespace squall {

inline void name_this_thread(const char* name) { pthread_setname_np(pthread_self(), name); }

}  // namespace squall
