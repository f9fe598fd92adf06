// SPDX-License-Identifier: BSD-3-Clause
// The runtime's own threads (squall-progress, squall-watchdog, squall-ucx-io, squall-tcp-io,
// squall-setup, squall-faults): started named (at most 15 characters), so that top -H, perf
// and /proc tell them from the program's; one that cannot be started ends the node with a
// message naming it and, when the cause is the user's limit of processes and threads
// (`ulimit -u`, which counts threads), that limit. std::thread's own failure ended the node in
// std::terminate: "terminate called after throwing an instance of 'std::system_error' what():
// Resource temporarily unavailable".
#pragma once
#include <pthread.h>

#include <system_error>
#include <thread>
#include <utility>

namespace squall {

inline void name_this_thread(const char* name) { pthread_setname_np(pthread_self(), name); }

// Ends the node: "cannot start the runtime's thread NAME: ERROR (...ulimit -u...)".
[[noreturn]] void runtime_thread_failed(const char* name, int err);

// A thread named `name` running body().
template <class F>
std::thread start_runtime_thread(const char* name, F&& body) {
  try {
    return std::thread([name, body = std::forward<F>(body)]() mutable {
      name_this_thread(name);
      body();
    });
  } catch (const std::system_error& e) {
    runtime_thread_failed(name, e.code().value());
  }
}

}  // namespace squall
