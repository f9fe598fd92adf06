// SPDX-License-Identifier: BSD-3-Clause
#include "memory/thread_path.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>

#include "common/log.hpp"
#include "common/runtime_thread.hpp"
#include "memory/counters.hpp"
#include "memory/deferred_maps.hpp"
#include "memory/fault_service.hpp"
#include "memory/uffd_abi.hpp"

namespace squall::memory::detail {
namespace {

constexpr std::size_t reports_per_read = 16;

void wake(int uffd, wake_range block) {
  uffdio_range r{reinterpret_cast<__u64>(block.start), block.bytes};
  if (::ioctl(uffd, UFFDIO_WAKE, &r) != 0) fatal("UFFDIO_WAKE failed: %s", std::strerror(errno));
}

// The ranges the fault threads woke (or are about to wake), in order. A report read before a
// wake of its range is a duplicate: its thread was waiting when the range was woken, so it no
// longer waits on that report (it ran on, or faulted again, which makes a new report). Serving
// the report would run the protocol for nobody and could take the block back from another
// node. Such a report is not served; its page is woken (harmless) in case the log cannot tell.
// (A late report the log misses, read between an entry and its wake, is caught where a fault
// under the node lock is refused: fault_service.hpp.)
class wake_log {
 public:
  std::uint64_t now() {
    std::lock_guard g(mu_);
    return next_;
  }
  // Before the wake (see serve): a report read after it is still taken for a duplicate, but
  // only woken, and its thread faults again if it must.
  void add(wake_range r) {
    std::lock_guard g(mu_);
    ring_[next_ % capacity] = {reinterpret_cast<std::uintptr_t>(r.start), r.bytes};
    ++next_;
  }
  // Whether a wake since `since` covered `address`; true also when too many wakes happened
  // since to tell (then the report's thread faults again if it still needs to).
  bool woken_since(std::uint64_t since, std::uintptr_t address) {
    std::lock_guard g(mu_);
    if (next_ - since > capacity) return true;
    for (std::uint64_t i = since; i < next_; ++i) {
      const entry& e = ring_[i % capacity];
      if (address - e.start < e.bytes) return true;
    }
    return false;
  }

 private:
  static constexpr std::uint64_t capacity = 64;
  struct entry {
    std::uintptr_t start = 0;
    std::size_t bytes = 0;
  };
  std::mutex mu_;
  std::uint64_t next_ = 0;
  entry ring_[capacity];
};

wake_log woken;

void serve(int uffd, const uffd_msg& m, std::uint64_t retirements_before_read, std::uint64_t wakes_before_read) {
  if (m.event != UFFD_EVENT_PAGEFAULT) return;
  const std::uintptr_t address = m.arg.pagefault.address;
  // Side by side with the other fault threads; then one report at a time, as protocol handlers
  // run anyway, so that a wake cannot come between the look at the log and the serving.
  fill_reported(reinterpret_cast<const void*>(address), retirements_before_read);
  wake_range block;
  {
    faults_held_off one_at_a_time;
    if (woken.woken_since(wakes_before_read, address)) {
      count(reports_not_served);
      const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
      wake(uffd, {reinterpret_cast<std::byte*>(address & ~(page - 1)), page});
      return;
    }
    const auto flags = m.arg.pagefault.flags;
    const bool write = (flags & (UFFD_PAGEFAULT_FLAG_WRITE | UFFD_PAGEFAULT_FLAG_WP)) != 0;
    // ptid is 0 without UFFD_FEATURE_THREAD_ID (Linux 4.14+); then no check for the node lock.
    block = serve_reported_fault(reinterpret_cast<const void*>(address), write,
                                 static_cast<int>(m.arg.pagefault.feat.ptid), retirements_before_read);
    // Logged before the wake, which waits for the mapping below: a report of the block that
    // another fault thread reads from now on is a duplicate (its thread is woken too) or, if
    // it faulted after the wake, is taken for one and only woken, to fault again.
    if (block.bytes != 0) woken.add(block);
  }
  map_deferred();  // without the fault lock: side by side with another fault thread's serving
  if (block.bytes == 0) {  // a late report: no one waits on it
    count(reports_not_served);
    return;
  }
  wake(uffd, block);  // only now: the faulting thread must not run on before the handler ends
}

void serve_forever(int uffd) {
  uffd_msg messages[reports_per_read];
  for (;;) {
    pollfd p{uffd, POLLIN, 0};
    if (::poll(&p, 1, -1) < 0 && errno != EINTR) fatal("poll on the userfaultfd: %s", std::strerror(errno));
    const std::uint64_t retirements_before_read = retirements_begun();
    const std::uint64_t wakes_before_read = woken.now();
    const ssize_t n = ::read(uffd, messages, sizeof messages);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      fatal("reading the userfaultfd: %s", std::strerror(errno));
    }
    for (ssize_t i = 0; i < n / static_cast<ssize_t>(sizeof(uffd_msg)); ++i) {
      serve(uffd, messages[i], retirements_before_read, wakes_before_read);
    }
  }
}

}  // namespace

void start_fault_threads(int uffd, int threads) {
  static std::mutex mu;
  static int started = 0;
  std::lock_guard g(mu);
  for (; started < threads; ++started) {
    start_runtime_thread("squall-faults", [uffd] { serve_forever(uffd); }).detach();
  }
}

}  // namespace squall::memory::detail
