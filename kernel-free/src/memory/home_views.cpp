// SPDX-License-Identifier: BSD-3-Clause
#include "memory/home_views.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include <squall/collectives.hpp>

#include "common/config.hpp"
#include "memory/counters.hpp"
#include "runtime/node.hpp"

namespace squall::memory::detail {

void open_home_views(segment_state& s) {
  const rt::node_runtime* nd = rt::current();
  const auto n = static_cast<std::size_t>(nd != nullptr ? nd->n : 1);
  s.home_views.assign(n, nullptr);
  if (n == 1) return;
  static const bool wanted = env_bool("SQUALL_HOME_VIEWS", true);
  // Every node's memfd number (+1; 0: not offered), one allreduce: each fills its own slot.
  std::vector<std::uint64_t> fds(n, 0);
  if (wanted) fds[static_cast<std::size_t>(nd->me)] = static_cast<std::uint64_t>(s.memfd) + 1;
  allreduce(std::span<const std::uint64_t>(fds), std::span<std::uint64_t>(fds), op::max{});
  if (!wanted) return;
  for (std::size_t i = 0; i < n; ++i) {
    if (static_cast<int>(i) == nd->me || fds[i] == 0 || !nd->on_this_host[i]) continue;
    const pid_t pid = nd->job.control(static_cast<int>(i)).pid.load(std::memory_order_relaxed);
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/fd/%llu", static_cast<int>(pid),
                  static_cast<unsigned long long>(fds[i] - 1));
    const int fd = pid > 0 ? ::open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0) {
      count(home_views_refused);
      continue;
    }
    void* view = ::mmap(nullptr, s.bytes, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    if (view == MAP_FAILED) {
      count(home_views_refused);
      continue;
    }
    s.home_views[i] = static_cast<const std::byte*>(view);
  }
}

void close_home_views(segment_state& s) {
  for (const std::byte*& view : s.home_views) {
    if (view != nullptr) ::munmap(const_cast<std::byte*>(view), s.bytes);
    view = nullptr;
  }
}

}  // namespace squall::memory::detail
