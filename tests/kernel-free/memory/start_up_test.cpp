// SPDX-License-Identifier: BSD-3-Clause
// Start-up of the memory layer: what it says when the segment range is taken, the
// configuration is wrong, or userfaultfd is missing or not permitted. Each case runs in a
// fresh process (death tests), before the layer has started there.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <squall/memory.hpp>

namespace {

using namespace squall;

// Makes userfaultfd(2) fail with `error` (unless `allow_user_mode_only` and it asks for
// UFFD_USER_MODE_ONLY) and, if `block_device`, the ioctl that opens a userfaultfd through
// /dev/userfaultfd fail with EACCES, as on a kernel or for a user that cannot have one.
void forbid_userfaultfd(int error, bool block_device, bool allow_user_mode_only = false) {
  constexpr unsigned userfaultfd_ioc_new = 0xAA00;  // USERFAULTFD_IOC_NEW
  constexpr unsigned user_mode_only = 1;            // UFFD_USER_MODE_ONLY
  const sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_userfaultfd, 0, 4),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, allow_user_mode_only ? user_mode_only : 0, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | static_cast<unsigned>(error)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[1])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, userfaultfd_ioc_new, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, block_device ? SECCOMP_RET_ERRNO | EACCES : SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  const sock_fprog program{static_cast<unsigned short>(std::size(filter)), const_cast<sock_filter*>(filter)};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    std::perror("seccomp");
    std::exit(3);
  }
}

// The runtime is up (bad_input_test.cpp's environment); this starts the memory layer.
void start_memory_layer() { memory::active_fault_path(); }

// A range clear of ASan's heap at 0x600000000000; under TSan, in the low range it lets
// programs map.
#if defined(SQUALL_TSAN)
#define SQUALL_TAKEN_RANGE "7000000000"
#define SQUALL_TAKEN_PAGE "7000100000"
#else
#define SQUALL_TAKEN_RANGE "580000000000"
#define SQUALL_TAKEN_PAGE "580000100000"
#endif

TEST(StartUpDeathTest, SegmentRangeTaken) {
  const std::uintptr_t page_in_range = std::strtoull(SQUALL_TAKEN_PAGE, nullptr, 16);
  EXPECT_EXIT(
      {
        setenv("SQUALL_SEGMENT_BASE", SQUALL_TAKEN_RANGE, 1);
        setenv("SQUALL_SEGMENT_SPACE_GIB", "1", 1);
        ::mmap(reinterpret_cast<void*>(page_in_range), 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        start_memory_layer();
      },
      ::testing::ExitedWithCode(1),
      "cannot reserve the shared segment range 0x" SQUALL_TAKEN_RANGE "-0x[0-9a-f]+ .*it is taken in this process by "
      "\\[" SQUALL_TAKEN_PAGE "-[0-9a-f]+ .*SQUALL_SEGMENT_BASE");
}

// Sets this process's address-space limit (RLIMIT_AS) to what it maps now (sanitizers'
// shadows included) plus `more` bytes.
void limit_address_space_to_current_plus(unsigned long more) {
  unsigned long pages = 0;
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr || std::fscanf(statm, "%lu", &pages) != 1) std::exit(3);
  std::fclose(statm);
  rlimit limit{};
  limit.rlim_cur = limit.rlim_max = pages * 4096 + more;
  if (::setrlimit(RLIMIT_AS, &limit) != 0) std::exit(3);
}

// An address-space limit (`ulimit -v`, as batch systems set) too small for the reservation is
// named, with what to do; before, the message said the range was "taken ... by [unknown]" and
// told the user to move it.
TEST(StartUpDeathTest, AddressSpaceLimitTooSmall) {
  EXPECT_EXIT(
      {
        limit_address_space_to_current_plus(256ul << 20);
        start_memory_layer();
      },
      ::testing::ExitedWithCode(1),
      "cannot reserve the shared segment range of [0-9]+ GiB: this process's address-space limit \\(ulimit -v, "
      "RLIMIT_AS\\) is [0-9]+ MiB.*SQUALL_SEGMENT_SPACE_GIB");
}

// The same limit met later, when a segment's views are mapped: the message names it too.
TEST(StartUpDeathTest, AddressSpaceLimitMetByASegment) {
  EXPECT_EXIT(
      {
        setenv("SQUALL_SEGMENT_SPACE_GIB", "1", 1);
        limit_address_space_to_current_plus((1ul << 30) + (64ul << 20));  // the range and 64 MiB
        start_memory_layer();
        (void)memory::allocate(256ul << 20, {});  // its protocol view needs 256 MiB more
      },
      ::testing::ExitedWithCode(1),
      "cannot map a segment's protocol view: Cannot allocate memory \\(this process's address-space limit, "
      "ulimit -v or RLIMIT_AS, is [0-9]+ MiB");
}

// Makes the process's limit of open files, soft and hard, what it holds now plus `more`.
void limit_open_files_to_current_plus(int more) {
  int open = 0;
  for (int fd = 0; fd < 4096; ++fd) open += ::fcntl(fd, F_GETFD) != -1 ? 1 : 0;
  rlimit limit{};
  limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(open + more);
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) std::exit(3);
}

// Returns once every thread of this process but the main one has named itself "squall-...",
// which the runtime's threads do first thing (after std::thread's start); ends the process
// (status 3) if they have not within 10 s. Not under TSan, whose own thread keeps the
// program's name.
void wait_for_runtime_threads_to_start() {
#if !defined(SQUALL_TSAN)
  const std::string main_thread = std::to_string(::getpid());
  for (int tries = 0; tries < 10000; ++tries) {
    bool all_started = true;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
      if (task.path().filename() == main_thread) continue;
      std::ifstream comm(task.path() / "comm");
      std::string name;
      if (!std::getline(comm, name) || name.rfind("squall-", 0) != 0) all_started = false;
    }
    if (all_started) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::exit(3);
#endif
}

// Every segment holds a memfd or two: a program that makes many meets the limit of open
// files, and the message names it and what to do; before, it said only "Too many open files".
// The runtime's threads (the fault thread, the progress thread) must be running first: UBSan's
// check of a thread's type as it starts (clang's vptr check) opens a pipe, and with no
// descriptor left it called the object's memory unreadable, an "invalid vptr" (seen in loaded
// passes on both fault paths).
TEST(StartUpDeathTest, OpenFilesLimitMetBySegments) {
  EXPECT_EXIT(
      {
        start_memory_layer();
        wait_for_runtime_threads_to_start();
        limit_open_files_to_current_plus(8);
        for (int i = 0; i < 64; ++i) (void)memory::allocate(4096, {});
        std::exit(0);
      },
      ::testing::ExitedWithCode(1),
      "Too many open files \\(this process's limit of open files, 'ulimit -n', is [0-9]+;.*raise the hard limit");
}

// Read as strictly as the decimal settings (SQUALL_SEGMENT_SPACE_GIB=' 1' is refused): a
// space or a sign before the digits is refused too, not skipped.
TEST(StartUpDeathTest, BadSegmentBase) {
  for (const char* base : {"0x1234", " 0x40000000", "\t40000000", "+0x40000000", "-0x40000000", "0x", "0x4000g000"}) {
    EXPECT_EXIT(
        {
          setenv("SQUALL_SEGMENT_BASE", base, 1);
          start_memory_layer();
        },
        ::testing::ExitedWithCode(1), "SQUALL_SEGMENT_BASE must be a page-aligned hexadecimal address")
        << "'" << base << "'";
  }
}

TEST(StartUpDeathTest, BadFaultPath) {
  EXPECT_EXIT(
      {
        setenv("SQUALL_FAULT_PATH", "interrupt", 1);
        start_memory_layer();
      },
      ::testing::ExitedWithCode(1), "SQUALL_FAULT_PATH must be auto, sigbus or thread \\(got 'interrupt'\\)");
}

// ENOSYS does not prove the kernel lacks userfaultfd: here a seccomp filter answers for it,
// as valgrind, gVisor or a container's profile may, and the message says so.
TEST(StartUpDeathTest, UserfaultfdSystemCallUnavailable) {
  EXPECT_EXIT(
      {
        forbid_userfaultfd(ENOSYS, true);
        start_memory_layer();
      },
      ::testing::ExitedWithCode(1),
      "the userfaultfd system call is not available here \\(ENOSYS, kernel [^)]*\\); shared segments need it\\. "
      "This process runs under a seccomp filter that refuses it .*--security-opt seccomp=unconfined");
}

TEST(StartUpDeathTest, UserfaultfdNotPermitted) {
  EXPECT_EXIT(
      {
        forbid_userfaultfd(EPERM, true);
        start_memory_layer();
      },
      ::testing::ExitedWithCode(1),
      "userfaultfd is not permitted for this user .*vm.unprivileged_userfaultfd=1.*/dev/userfaultfd.*"
      "a seccomp filter guards this process");
}

TEST(StartUpDeathTest, DeviceServesWhenTheSystemCallIsNotPermitted) {
  EXPECT_EXIT(
      {
        forbid_userfaultfd(EPERM, false);
        start_memory_layer();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

// A user who may have a userfaultfd for user-mode faults only (vm.unprivileged_userfaultfd=0,
// no CAP_SYS_PTRACE, no /dev/userfaultfd): the layer starts and, on the thread path, which
// would otherwise serve the kernel's faults, says what breaks and why.
TEST(StartUpDeathTest, UserModeOnlyFallbackIsExplained) {
  EXPECT_EXIT(
      {
        setenv("SQUALL_FAULT_PATH", "thread", 1);
        forbid_userfaultfd(EPERM, true, true);
        start_memory_layer();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0),
      "squall: warning: userfaultfd serves faults in user mode only here \\((vm.unprivileged_userfaultfd=[0-9] and )?"
      "this user has neither CAP_SYS_PTRACE nor access to /dev/userfaultfd\\), so the thread fault path cannot "
      "serve the kernel's: a system call Squall does not interpose .* reads or writes an Invalid block .* fails "
      "with EFAULT .*Fix: 'sysctl vm.unprivileged_userfaultfd=1', or run as root or with "
      "CAP_SYS_PTRACE, or give this user read-write access to /dev/userfaultfd");
}

}  // namespace
