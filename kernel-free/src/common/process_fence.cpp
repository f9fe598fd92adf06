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

}  // namespace

bool enable() {
  if (enabled()) return true;
  const long supported = membarrier(MEMBARRIER_CMD_QUERY);
  if (supported < 0 || (supported & MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0) return false;
  if (membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) != 0) return false;
  detail::registered.store(true, std::memory_order_relaxed);
  return true;
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
  if (private_enabled()) return true;
  const long supported = membarrier(MEMBARRIER_CMD_QUERY);
  if (supported < 0 || (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
  if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0) return false;
  detail::private_registered.store(true, std::memory_order_relaxed);
  return true;
}

void heavy_private() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
    fatal("membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed after registration: %s", std::strerror(errno));
  }
}

}  // namespace squall::process_fence
