// fault_remote: one 4 KiB read miss served from another node - node 0 reads a block whose
// home is node 1, and the toy home-based protocol (tests/kernel-free/memory/home_protocol.hpp)
// fetches it with a request message and a grant carrying the block - beside the floor
// measured in the same run between the same two processes: a bare userfaultfd SIGBUS fault
// whose signal handler asks node 1 over a raw shared-memory ping-pong (one flag each way,
// node 1 copying the 4 KiB page into a shared buffer), copies the page into the page cache
// and resolves the fault with UFFDIO_CONTINUE (write-protected, as a ReadOnly install).
//
// remote_miss_us and floor_us are medians over every miss of every trial; ratio is their
// quotient. floor_fault_us (the bare fault resolved locally) shows what the fault alone costs.
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

#include <squall/memory.hpp>
#include <squall/squall.hpp>

#include "common/report.hpp"
#include "home_protocol.hpp"

namespace {

using squall::memory::block_index;
using squall::memory::tag;

constexpr std::size_t page = 4096;
constexpr std::size_t blocks = 2048;  // misses per trial
constexpr int trials = 7;

constexpr __u64 continue_mode_wp = 1u << 1;  // UFFDIO_CONTINUE_MODE_WP, absent from old headers

void touch_read(const std::byte* p) { (void)*reinterpret_cast<const volatile char*>(p); }

// Times each read of the first byte of `blocks` consecutive pages from base.
void time_misses(const std::byte* base, std::vector<double>& us) {
  for (block_index b = 0; b < blocks; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    touch_read(base + b * page);
    us.push_back(squall::bench::seconds_since(t0) * 1e6);
  }
}

bool stop = false;
void on_stop(squall::am::token&) { stop = true; }

// The floor's shared memory between nodes 0 and 1: a request and a reply counter, and the
// page being carried.
struct exchange {
  alignas(64) std::atomic<std::uint64_t> request{0};
  alignas(64) std::atomic<std::uint64_t> reply{0};
  alignas(64) std::byte data[page];
};

exchange& shared_exchange(int me) {
  // Node 0 creates a POSIX shared-memory object named after its pid; node 1 opens it.
  int pid = me == 0 ? getpid() : 0;
  squall::broadcast(pid);
  const std::string name = "/squall-fault-remote-" + std::to_string(pid);
  int fd = -1;
  if (me == 0) {
    fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(exchange)) != 0) std::perror("fault_remote: shm_open"), std::exit(1);
  }
  squall::barrier();
  if (me == 1) fd = shm_open(name.c_str(), O_RDWR, 0600);
  void* p = mmap(nullptr, sizeof(exchange), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (fd < 0 || p == MAP_FAILED) std::perror("fault_remote: mapping the floor's exchange"), std::exit(1);
  close(fd);
  squall::barrier();
  if (me == 0) shm_unlink(name.c_str());
  return *(me == 0 ? new (p) exchange : static_cast<exchange*>(p));
}

// The floor on node 0: a memfd mapped twice, one view registered with its own userfaultfd.
namespace bare {

int uffd = -1;
std::byte* view = nullptr;
std::byte* fill = nullptr;
exchange* link = nullptr;
volatile sig_atomic_t remote = 1;  // 0: resolve at once (floor_fault_us)

void on_sigbus(int, siginfo_t* info, void*) {
  const auto p = reinterpret_cast<__u64>(info->si_addr) & ~static_cast<__u64>(page - 1);
  if (remote) {
    const std::uint64_t i = link->request.load(std::memory_order_relaxed) + 1;
    link->request.store(i, std::memory_order_release);
    while (link->reply.load(std::memory_order_acquire) != i) __builtin_ia32_pause();
    std::memcpy(fill + (p - reinterpret_cast<__u64>(view)), link->data, page);
  }
  uffdio_continue c{{p, page}, continue_mode_wp, 0};
  while (ioctl(uffd, UFFDIO_CONTINUE, &c) != 0) {}
}

void set_up(exchange& x) {
  link = &x;
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
    std::perror("fault_remote: bare userfaultfd");
    std::exit(1);
  }
}

// One pass over the bare view with the bare handler in place of Squall's.
void time_pass(bool remote_pages, std::vector<double>& us) {
  madvise(view, blocks * page, MADV_DONTNEED);
  remote = remote_pages;
  struct sigaction bare_action {}, squall_action {};
  bare_action.sa_sigaction = on_sigbus;
  bare_action.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigaction(SIGBUS, &bare_action, &squall_action);
  time_misses(view, us);
  sigaction(SIGBUS, &squall_action, nullptr);
}

// Node 1's side of the floor: answers `count` requests, each with a copy of a page.
void serve(exchange& x, std::uint64_t count) {
  static std::byte source[page];
  std::memset(source, 2, page);
  for (std::uint64_t i = x.reply.load() + 1, end = i + count; i < end; ++i) {
    while (x.request.load(std::memory_order_acquire) != i) __builtin_ia32_pause();
    std::memcpy(x.data, source, page);
    x.reply.store(i, std::memory_order_release);
  }
}

}  // namespace bare

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  const int me = squall::node();
  if (squall::nodes() < 2) {
    if (me == 0) std::fprintf(stderr, "fault_remote needs 2 nodes (scripts/bench fault_remote -n 2)\n");
    return 1;
  }
  if (squall::memory::active_fault_path() != squall::memory::fault_path::sigbus && me == 0) {
    std::fprintf(stderr, "fault_remote: the fault path is not SIGBUS (SQUALL_FAULT_PATH); the floor would not compare\n");
  }
  toy_coherence::home_protocol proto(blocks);
  auto s = squall::memory::allocate(blocks * page, {.block_size = page,
                                                    .homes = squall::memory::home_policy::function([](block_index) { return 1; }),
                                                    .handler = &proto,
                                                    .initial = tag::invalid});
  if (me == 1) {
    for (block_index b = 0; b < blocks; ++b) std::memset(s.protocol_view(b).data(), 3, page);
  }
  exchange* x = me < 2 ? &shared_exchange(me) : nullptr;
  if (me >= 2) {  // nodes beyond 2 take part only in the collectives
    int pid = 0;
    squall::broadcast(pid);
    squall::barrier();
    squall::barrier();
  }
  if (me == 0) bare::set_up(*x);

  std::vector<double> miss_us, floor_us, fault_us;
  for (int t = 0; t < trials; ++t) {
    squall::barrier();
    if (me == 0) {
      // Drop the copies silently: the home still lists node 0 as a sharer, which costs a read
      // request nothing.
      for (block_index b = 0; b < blocks; ++b) s.set_tag(b, tag::invalid);
      time_misses(s.base(), miss_us);
      squall::am::send<on_stop>(1);
    } else if (me == 1) {
      stop = false;
      squall::am::wait_until([] { return stop; });
    }
    squall::barrier();
    if (me == 0) {
      bare::time_pass(true, floor_us);
      bare::time_pass(false, fault_us);
    } else if (me == 1) {
      bare::serve(*x, blocks);
    }
  }
  // Every byte arrived: the last miss of each kind read what the home holds.
  const bool right_bytes = me != 0 || (*reinterpret_cast<volatile char*>(s.base() + (blocks - 1) * page) == 3 &&
                                       *reinterpret_cast<volatile char*>(bare::view + (blocks - 1) * page) == 2);
  squall::memory::free(s);
  if (!right_bytes) {
    std::fprintf(stderr, "fault_remote: a miss read the wrong bytes\n");
    return 1;
  }
  if (me == 0) {
    squall::bench::figures f;
    const double miss = squall::bench::median(miss_us), floor = squall::bench::median(floor_us);
    f.add("remote_miss_us", miss);
    f.add("floor_us", floor);
    f.add("floor_fault_us", squall::bench::median(fault_us));
    f.add("ratio", miss / floor);
    f.print("fault_remote: 4 KiB read miss served by the home on node 1 (median of 7 x 2048 misses)",
            squall::bench::has_flag(argc, argv, "--json"));
  }
  return 0;
}
