// SPDX-License-Identifier: BSD-3-Clause
// The floor of a remote miss, shared by fault_remote and tsm_miss: a bare userfaultfd SIGBUS
// fault whose signal handler asks node 1 over a raw shared-memory ping-pong (one flag each
// way, node 1 copying the 4 KiB page into a shared buffer), copies the page into the page
// cache and resolves the fault with UFFDIO_CONTINUE (write-protected, as a ReadOnly install).
// Everything a miss must do, with no protocol, no messages and no runtime around it.
#pragma once
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <squall/squall.hpp>

#include "common/report.hpp"
#include "common/spin.hpp"

namespace squall::bench::remote_floor {

constexpr std::size_t page = 4096;
constexpr __u64 continue_mode_wp = 1u << 1;  // UFFDIO_CONTINUE_MODE_WP, absent from old headers

inline void touch_read(const std::byte* p) { (void)*reinterpret_cast<const volatile char*>(p); }

// Times each read of the first byte of `count` consecutive pages from base.
inline void time_misses(const std::byte* base, std::size_t count, std::vector<double>& us) {
  for (std::size_t b = 0; b < count; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    touch_read(base + b * page);
    us.push_back(seconds_since(t0) * 1e6);
  }
}

// The floor's shared memory between nodes 0 and 1: a request and a reply counter, and the
// page being carried.
struct exchange {
  alignas(64) std::atomic<std::uint64_t> request{0};
  alignas(64) std::atomic<std::uint64_t> reply{0};
  alignas(64) std::byte data[page];
};

inline exchange& shared_exchange(int me) {
  // Node 0 creates a POSIX shared-memory object named after its pid; node 1 opens it.
  int pid = me == 0 ? getpid() : 0;
  squall::broadcast(pid);
  const std::string name = "/squall-remote-floor-" + std::to_string(pid);
  int fd = -1;
  if (me == 0) {
    fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(exchange)) != 0) std::perror("remote floor: shm_open"), std::exit(1);
  }
  squall::barrier();
  if (me == 1) fd = shm_open(name.c_str(), O_RDWR, 0600);
  void* p = mmap(nullptr, sizeof(exchange), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (fd < 0 || p == MAP_FAILED) std::perror("remote floor: mapping the exchange"), std::exit(1);
  close(fd);
  squall::barrier();
  if (me == 0) shm_unlink(name.c_str());
  return *(me == 0 ? new (p) exchange : static_cast<exchange*>(p));
}

// The floor on node 0: a memfd mapped twice, one view registered with its own userfaultfd.
namespace bare {

inline int uffd = -1;
inline std::size_t blocks = 0;
inline std::byte* view = nullptr;
inline std::byte* fill = nullptr;
inline exchange* link = nullptr;
inline volatile sig_atomic_t remote = 1;  // 0: resolve at once (floor_fault_us)

inline void on_sigbus(int, siginfo_t* info, void*) {
  const auto p = reinterpret_cast<__u64>(info->si_addr) & ~static_cast<__u64>(page - 1);
  if (remote) {
    const std::uint64_t i = link->request.load(std::memory_order_relaxed) + 1;
    link->request.store(i, std::memory_order_release);
    squall::bench::spin_until([&] { return link->reply.load(std::memory_order_acquire) == i; });
    std::memcpy(fill + (p - reinterpret_cast<__u64>(view)), link->data, page);
  }
  uffdio_continue c{{p, page}, continue_mode_wp, 0};
  while (ioctl(uffd, UFFDIO_CONTINUE, &c) != 0) {}
}

// Node 0: `count` pages of bare view.
inline void set_up(exchange& x, std::size_t count) {
  link = &x;
  blocks = count;
  const int fd = memfd_create("fault-remote-floor", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, blocks * page) != 0) std::abort();
  view = static_cast<std::byte*>(mmap(nullptr, blocks * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  fill = static_cast<std::byte*>(mmap(nullptr, blocks * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  if (view == MAP_FAILED || fill == MAP_FAILED) std::abort();
  std::memset(fill, 1, blocks * page);  // into the page cache, as a segment's blocks are
  uffd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
  uffdio_api api{UFFD_API, UFFD_FEATURE_SIGBUS | UFFD_FEATURE_MINOR_SHMEM | UFFD_FEATURE_WP_HUGETLBFS_SHMEM, 0};
  uffdio_register r{{reinterpret_cast<__u64>(view), blocks * page},
                    UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_MINOR | UFFDIO_REGISTER_MODE_WP, 0};
  if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) != 0 || ioctl(uffd, UFFDIO_REGISTER, &r) != 0) {
    std::perror("remote floor: bare userfaultfd");
    std::exit(1);
  }
}

// One pass over the bare view with the bare handler in place of Squall's.
inline void time_pass(bool remote_pages, std::vector<double>& us) {
  madvise(view, blocks * page, MADV_DONTNEED);
  remote = remote_pages;
  struct sigaction bare_action {}, squall_action {};
  bare_action.sa_sigaction = on_sigbus;
  bare_action.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigaction(SIGBUS, &bare_action, &squall_action);
  time_misses(view, blocks, us);
  sigaction(SIGBUS, &squall_action, nullptr);
}

// Node 1's side of the floor: answers `count` requests, each with a copy of a page.
inline void serve(exchange& x, std::uint64_t count) {
  static std::byte source[page];
  std::memset(source, 2, page);
  for (std::uint64_t i = x.reply.load() + 1, end = i + count; i < end; ++i) {
    squall::bench::spin_until([&] { return x.request.load(std::memory_order_acquire) == i; });
    std::memcpy(x.data, source, page);
    x.reply.store(i, std::memory_order_release);
  }
}

}  // namespace bare

}  // namespace squall::bench::remote_floor
