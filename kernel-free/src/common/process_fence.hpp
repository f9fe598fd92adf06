// SPDX-License-Identifier: BSD-3-Clause
// Asymmetric fences between the processes of a job, for the doorbell's Dekker pattern: a
// sender publishes a packet and then reads whether the receiver polls; a receiver about to
// sleep says it no longer polls and then looks for packets. Each side needs a full fence
// between its store and its load, but the sender's fence waits for its packet's cache line
// to arrive, and that stall cost about 80 ns of a 0.21 us shared-memory round trip
// (measured). So senders use a compiler barrier only, and a receiver about to sleep - the
// rare side, already paying for a futex wait - makes every running thread of every
// registered process execute a full barrier (membarrier(2), MEMBARRIER_CMD_GLOBAL_EXPEDITED:
// about 10 us on the development VM when the other core runs a node, 0.2 us when idle).
//
// Where the kernel refuses, both sides use full fences. A process is covered once it has
// called enable(); node_control::light_fences tells senders that a receiver has (senders
// fence until then).
#pragma once
#include <atomic>

namespace squall::process_fence {

namespace detail {
inline std::atomic<bool> registered{false};
inline std::atomic<bool> private_registered{false};
}

// Registers this process for the heavy side; false when the kernel cannot.
bool enable();
inline bool enabled() { return detail::registered.load(std::memory_order_relaxed); }

// The frequent side (a sender), for a receiver that set light_fences.
inline void light(bool receiver_has_heavy) {
  if (receiver_has_heavy && enabled()) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
}

// The rare side (a receiver about to sleep).
void heavy();

// The same between the threads of this process only (MEMBARRIER_CMD_PRIVATE_EXPEDITED: no
// other process is interrupted), for the node lock's bias (runtime/node_lock.hpp).
bool enable_private();
inline bool private_enabled() { return detail::private_registered.load(std::memory_order_relaxed); }
void heavy_private();

}  // namespace squall::process_fence
