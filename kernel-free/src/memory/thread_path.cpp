#include "memory/thread_path.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "common/log.hpp"
#include "memory/fault_service.hpp"
#include "memory/uffd_abi.hpp"

namespace squall::memory::detail {
namespace {

void wake(int uffd, block_range block) {
  uffdio_range r{reinterpret_cast<__u64>(block.start), block.bytes};
  if (::ioctl(uffd, UFFDIO_WAKE, &r) != 0) fatal("UFFDIO_WAKE failed: %s", std::strerror(errno));
}

void serve(int uffd, const uffd_msg& m) {
  if (m.event != UFFD_EVENT_PAGEFAULT) return;
  const auto* address = reinterpret_cast<const void*>(m.arg.pagefault.address);
  const auto flags = m.arg.pagefault.flags;
  const bool write = (flags & (UFFD_PAGEFAULT_FLAG_WRITE | UFFD_PAGEFAULT_FLAG_WP)) != 0;
  // ptid is 0 without UFFD_FEATURE_THREAD_ID (Linux 4.14+); then no check for the node lock.
  const block_range block = serve_reported_fault(address, write, static_cast<int>(m.arg.pagefault.feat.ptid));
  // Only segments are registered, so a report that no live segment holds is a late one for
  // a freed segment: no one waits on it.
  if (block.bytes == 0) return;
  wake(uffd, block);  // only now: the faulting thread must not run on before the handler ends
}

void serve_forever(int uffd) {
  uffd_msg messages[16];
  for (;;) {
    pollfd p{uffd, POLLIN, 0};
    if (::poll(&p, 1, -1) < 0 && errno != EINTR) fatal("poll on the userfaultfd: %s", std::strerror(errno));
    const ssize_t n = ::read(uffd, messages, sizeof messages);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      fatal("reading the userfaultfd: %s", std::strerror(errno));
    }
    for (ssize_t i = 0; i < n / static_cast<ssize_t>(sizeof(uffd_msg)); ++i) serve(uffd, messages[i]);
  }
}

}  // namespace

void start_fault_thread(int uffd) { std::thread(serve_forever, uffd).detach(); }

}  // namespace squall::memory::detail
