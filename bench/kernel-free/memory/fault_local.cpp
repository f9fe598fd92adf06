// SPDX-License-Identifier: BSD-3-Clause
// fault_local: the cost of one access fault resolved by a handler that only raises the tag,
// through Squall's API - a read on an Invalid block (mapped ReadOnly by UFFDIO_CONTINUE) and
// a write on a ReadOnly block (write-protect cleared) - beside the floor measured in the
// same run: the same two faults on a bare userfaultfd in SIGBUS mode, resolved in the
// signal handler directly with the ioctl.
//
// ratio = the worse of read_fault_us / floor_fault_us and wp_fault_us / floor_wp_fault_us
// (each Squall fault against the bare fault of the same kind); medians of the trials.
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <squall/memory.hpp>
#include <squall/squall.hpp>

#include "common/report.hpp"

namespace {

using squall::memory::block_index;
using squall::memory::segment;
using squall::memory::tag;

constexpr std::size_t page = 4096;
constexpr std::size_t blocks = 4096;  // faults per trial
constexpr int trials = 11;

constexpr __u64 continue_mode_wp = 1u << 1;  // UFFDIO_CONTINUE_MODE_WP, absent from old headers

struct raise_only : squall::memory::protocol {
  void read_fault(segment s, block_index b) override { s.set_tag(b, tag::read_only); }
  void write_fault(segment s, block_index b) override { s.set_tag(b, tag::read_write); }
};

void touch_read(const std::byte* p) { (void)*reinterpret_cast<const volatile char*>(p); }
void touch_write(std::byte* p) { *reinterpret_cast<volatile char*>(p) = 1; }

template <class F>
double per_fault_us(F&& touch_all) {
  const auto t0 = std::chrono::steady_clock::now();
  touch_all();
  return squall::bench::seconds_since(t0) / blocks * 1e6;
}

// The floor: a memfd mapped twice, one view registered with its own userfaultfd.
namespace bare {

int uffd = -1;
std::byte* view = nullptr;
volatile sig_atomic_t resolving_writes = 0;

void on_sigbus(int, siginfo_t* info, void*) {
  const auto p = reinterpret_cast<__u64>(info->si_addr) & ~static_cast<__u64>(page - 1);
  if (resolving_writes) {
    uffdio_writeprotect w{{p, page}, 0};
    while (ioctl(uffd, UFFDIO_WRITEPROTECT, &w) != 0) {}
  } else {
    uffdio_continue c{{p, page}, continue_mode_wp, 0};
    while (ioctl(uffd, UFFDIO_CONTINUE, &c) != 0) {}
  }
}

void set_up() {
  const int fd = memfd_create("fault-floor", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, blocks * page) != 0) std::abort();
  view = static_cast<std::byte*>(mmap(nullptr, blocks * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  auto* fill = static_cast<std::byte*>(mmap(nullptr, blocks * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  if (view == MAP_FAILED || fill == MAP_FAILED) std::abort();
  std::fill(fill, fill + blocks * page, std::byte{1});  // into the page cache
  uffd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
  uffdio_api api{UFFD_API, UFFD_FEATURE_SIGBUS | UFFD_FEATURE_MINOR_SHMEM | UFFD_FEATURE_WP_HUGETLBFS_SHMEM, 0};
  uffdio_register r{{reinterpret_cast<__u64>(view), blocks * page},
                    UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_MINOR | UFFDIO_REGISTER_MODE_WP, 0};
  if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) != 0 || ioctl(uffd, UFFDIO_REGISTER, &r) != 0) {
    std::perror("fault_local: bare userfaultfd");
    std::exit(1);
  }
}

// Runs f with the bare handler in place of Squall's.
template <class F>
double with_bare_handler(F&& f) {
  struct sigaction bare_action {}, squall_action {};
  bare_action.sa_sigaction = on_sigbus;
  bare_action.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigaction(SIGBUS, &bare_action, &squall_action);
  const double us = f();
  sigaction(SIGBUS, &squall_action, nullptr);
  return us;
}

}  // namespace bare

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  squall::bench::command_line options("fault_local", argc, argv, squall::node());
  const bool json = options.flag("--json");
  if (!options.finish()) return 2;
  if (squall::memory::active_fault_path() != squall::memory::fault_path::sigbus) {
    std::fprintf(stderr, "fault_local: the fault path is not SIGBUS (SQUALL_FAULT_PATH); the floor would not compare\n");
  }
  raise_only proto;
  segment s = squall::memory::allocate(blocks * page, {.block_size = page, .handler = &proto, .initial = tag::invalid});
  for (block_index b = 0; b < blocks; ++b) s.protocol_view(b)[0] = std::byte{1};  // into the page cache
  bare::set_up();

  std::vector<double> reads, writes, floor_reads, floor_writes;
  for (int t = 0; t < trials; ++t) {
    for (block_index b = 0; b < blocks; ++b) s.set_tag(b, tag::invalid);
    reads.push_back(per_fault_us([&] {
      for (block_index b = 0; b < blocks; ++b) touch_read(s.address_of(b));
    }));
    writes.push_back(per_fault_us([&] {  // every block is ReadOnly now
      for (block_index b = 0; b < blocks; ++b) touch_write(s.address_of(b));
    }));
    madvise(bare::view, blocks * page, MADV_DONTNEED);
    floor_reads.push_back(bare::with_bare_handler([] {
      bare::resolving_writes = 0;
      return per_fault_us([] {
        for (block_index b = 0; b < blocks; ++b) touch_read(bare::view + b * page);
      });
    }));
    floor_writes.push_back(bare::with_bare_handler([] {
      bare::resolving_writes = 1;
      return per_fault_us([] {
        for (block_index b = 0; b < blocks; ++b) touch_write(bare::view + b * page);
      });
    }));
  }
  squall::memory::free(s);

  const double read_us = squall::bench::median(reads), wp_us = squall::bench::median(writes);
  const double floor_us = squall::bench::median(floor_reads), floor_wp_us = squall::bench::median(floor_writes);
  squall::bench::figures f;
  f.add("read_fault_us", read_us);
  f.add("wp_fault_us", wp_us);
  f.add("floor_fault_us", floor_us);
  f.add("floor_wp_fault_us", floor_wp_us);
  f.add("ratio", std::max(read_us / floor_us, wp_us / floor_wp_us));
  if (squall::node() == 0) {
    f.print("fault_local: one fault resolved by a handler that raises the tag (median of trials)", json);
  }
  return 0;
}
