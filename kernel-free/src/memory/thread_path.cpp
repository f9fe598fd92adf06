// SPDX-License-Identifier: BSD-3-Clause
#include "memory/thread_path.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <thread>

#include "common/log.hpp"
#include "memory/counters.hpp"
#include "memory/fault_service.hpp"
#include "memory/uffd_abi.hpp"

namespace squall::memory::detail {
namespace {

constexpr std::size_t reports_per_read = 16;

void wake(int uffd, wake_range block) {
  uffdio_range r{reinterpret_cast<__u64>(block.start), block.bytes};
  if (::ioctl(uffd, UFFDIO_WAKE, &r) != 0) fatal("UFFDIO_WAKE failed: %s", std::strerror(errno));
}

// The ranges woken while serving one read's reports. A later report of the same read that
// falls in one is a duplicate (several threads faulted on one block): its thread was waiting
// when the range was woken, so no one waits on it any more. Serving it would run the protocol
// for nobody, and could take the block back from another node.
class woken_ranges {
 public:
  bool holds(std::uintptr_t address) const {
    for (std::size_t i = 0; i < n_; ++i) {
      if (address - start_[i] < bytes_[i]) return true;
    }
    return false;
  }
  void add(wake_range r) {
    start_[n_] = reinterpret_cast<std::uintptr_t>(r.start);
    bytes_[n_] = r.bytes;
    ++n_;
  }

 private:
  std::uintptr_t start_[reports_per_read];
  std::size_t bytes_[reports_per_read];
  std::size_t n_ = 0;
};

void serve(int uffd, const uffd_msg& m, std::uint64_t retirements_before_read, woken_ranges& woken) {
  if (m.event != UFFD_EVENT_PAGEFAULT) return;
  const std::uintptr_t address = m.arg.pagefault.address;
  if (woken.holds(address)) {
    count(reports_not_served);
    return;
  }
  const auto flags = m.arg.pagefault.flags;
  const bool write = (flags & (UFFD_PAGEFAULT_FLAG_WRITE | UFFD_PAGEFAULT_FLAG_WP)) != 0;
  // ptid is 0 without UFFD_FEATURE_THREAD_ID (Linux 4.14+); then no check for the node lock.
  const wake_range block = serve_reported_fault(reinterpret_cast<const void*>(address), write,
                                                 static_cast<int>(m.arg.pagefault.feat.ptid),
                                                 retirements_before_read);
  if (block.bytes == 0) {  // a late report: no one waits on it
    count(reports_not_served);
    return;
  }
  wake(uffd, block);  // only now: the faulting thread must not run on before the handler ends
  woken.add(block);
}

void serve_forever(int uffd) {
  uffd_msg messages[reports_per_read];
  for (;;) {
    pollfd p{uffd, POLLIN, 0};
    if (::poll(&p, 1, -1) < 0 && errno != EINTR) fatal("poll on the userfaultfd: %s", std::strerror(errno));
    const std::uint64_t retirements_before_read = retirements_begun();
    const ssize_t n = ::read(uffd, messages, sizeof messages);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      fatal("reading the userfaultfd: %s", std::strerror(errno));
    }
    woken_ranges woken;
    for (ssize_t i = 0; i < n / static_cast<ssize_t>(sizeof(uffd_msg)); ++i) {
      serve(uffd, messages[i], retirements_before_read, woken);
    }
  }
}

}  // namespace

void start_fault_thread(int uffd) { std::thread(serve_forever, uffd).detach(); }

}  // namespace squall::memory::detail
