// SPDX-License-Identifier: BSD-3-Clause
#include "common/process_fence.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.hpp"

namespace squall::process_fence {
namespace {

long membarrier(int cmd) { return ::syscall(__NR_membarrier, cmd, 0u, 0); }

// Registers for `cmd` when the kernel offers it; `done` remembers that it did.
bool register_for(int cmd, int register_cmd, std::atomic<bool>& done) {
  if (done.load(std::memory_order_relaxed)) return true;
  const long supported = membarrier(MEMBARRIER_CMD_QUERY);
  if (supported < 0 || (supported & cmd) == 0 || membarrier(register_cmd) != 0) return false;
  done.store(true, std::memory_order_relaxed);
  return true;
}

}  // namespace

bool enable() {
  return register_for(MEMBARRIER_CMD_GLOBAL_EXPEDITED, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, detail::registered);
}

void heavy() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!enabled()) return;  // then this node's senders fence fully (light_fences stays 0)
  if (membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0) {
    // Senders rely on it from the moment this process registered: going on would risk
    // sleeping through a packet.
    fatal("membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) failed after registration: %s", std::strerror(errno));
  }
}

bool enable_private() {
  return register_for(MEMBARRIER_CMD_PRIVATE_EXPEDITED, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
                      detail::private_registered);
}

void heavy_private() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
    fatal("membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed after registration: %s", std::strerror(errno));
  }
}

}  // namespace squall::process_fence
