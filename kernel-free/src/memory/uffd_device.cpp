// SPDX-License-Identifier: BSD-3-Clause
#include "memory/uffd_device.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>

#include "common/log.hpp"
#include "memory/uffd_abi.hpp"

namespace squall::memory::detail {
namespace {

constexpr int fd_flags = O_CLOEXEC | O_NONBLOCK;

struct required_feature {
  std::uint64_t bit;
  const char* what;
  const char* since;
};
constexpr required_feature required_features[] = {
    {UFFD_FEATURE_MISSING_SHMEM, "missing-page faults on shared memory", "4.11"},
    {UFFD_FEATURE_MINOR_SHMEM, "minor faults on shared memory (UFFD_FEATURE_MINOR_SHMEM)", "5.14"},
    {UFFD_FEATURE_WP_HUGETLBFS_SHMEM,
     "write-protect on shared memory (UFFD_FEATURE_WP_HUGETLBFS_SHMEM, CONFIG_PTE_MARKER_UFFD_WP)",
     "5.19"},
};

const char* kernel_release() {
  static utsname u;
  return uname(&u) == 0 ? u.release : "unknown";
}

// Whether a line of the file `path` starts with `start` and contains `part`.
bool file_has_line(const char* path, std::string_view start, std::string_view part) {
  std::ifstream file(path);
  for (std::string line; std::getline(file, line);) {
    if (line.starts_with(start) && line.find(part) != std::string::npos) return true;
  }
  return false;
}

// valgrind preloads its vgpreload_*.so into the program it runs.
bool under_valgrind() { return file_has_line("/proc/self/maps", "", "/vgpreload_"); }
// "Seccomp: 2": a seccomp filter (a container's profile, a sandbox) sees every system call.
bool under_seccomp() { return file_has_line("/proc/self/status", "Seccomp:", "2"); }

// ENOSYS says the call did not reach a kernel that serves it, not why: the kernel may lack
// it, or something between the program and the kernel answers for it.
std::string no_system_call_message() {
  std::string why;
  if (under_valgrind()) {
    why = "This process runs under valgrind, which does not pass userfaultfd through: run the "
          "program without valgrind (for memory errors, build with the asan preset: "
          "scripts/build asan)";
  } else if (under_seccomp()) {
    why = "This process runs under a seccomp filter that refuses it (a container's profile, or a "
          "sandbox): allow userfaultfd in the profile, e.g. docker/podman run --security-opt "
          "seccomp=unconfined, or run outside the container";
  } else {
    why = "Either this kernel was built without CONFIG_USERFAULTFD, or a sandbox or emulator "
          "(gVisor, valgrind, a container's seccomp profile) does not pass the call through: run "
          "the program directly on a kernel with userfaultfd";
  }
  return format("the userfaultfd system call is not available here (ENOSYS, kernel %s); shared "
                "segments need it. %s",
                kernel_release(), why.c_str());
}

int userfaultfd_syscall(int flags) { return static_cast<int>(::syscall(SYS_userfaultfd, flags)); }

// userfaultfd(2) if permitted, else /dev/userfaultfd, else user-mode-only faults (always
// permitted, but then the kernel's own accesses fail with EFAULT instead of waiting).
int create(bool& kernel_faults) {
  kernel_faults = true;
  int fd = userfaultfd_syscall(fd_flags);
  if (fd >= 0) return fd;
  const int err = errno;
  if (err == ENOSYS) fatal("%s", no_system_call_message().c_str());
  if (err != EPERM && err != EACCES) fatal("userfaultfd failed: %s", std::strerror(err));
  const int dev = ::open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
  if (dev >= 0) {
    fd = ::ioctl(dev, USERFAULTFD_IOC_NEW, fd_flags);
    ::close(dev);
    if (fd >= 0) return fd;
  }
  kernel_faults = false;
  fd = userfaultfd_syscall(fd_flags | UFFD_USER_MODE_ONLY);
  if (fd >= 0) return fd;
  fatal("userfaultfd is not permitted for this user (%s); shared segments need one of: "
        "running as root (CAP_SYS_PTRACE), 'sysctl vm.unprivileged_userfaultfd=1', or read-write "
        "access to /dev/userfaultfd%s",
        std::strerror(errno),
        under_seccomp() ? "; or, since a seccomp filter guards this process (a container's default profile refuses "
                          "userfaultfd), a profile that allows it: docker/podman run --security-opt seccomp=unconfined"
                        : "");
}

void api_handshake(int fd, std::uint64_t features, uffdio_api& api) {
  api = uffdio_api{};
  api.api = UFFD_API;
  api.features = features;
  if (::ioctl(fd, UFFDIO_API, &api) != 0) {
    fatal("userfaultfd UFFDIO_API failed on kernel %s: %s", kernel_release(), std::strerror(errno));
  }
}

// What the kernel offers, asked once on a throwaway descriptor (UFFDIO_API may be called
// only once per descriptor).
std::uint64_t offered_features() {
  static const std::uint64_t offered = [] {
    bool kernel_faults = false;
    const int fd = create(kernel_faults);
    uffdio_api api;
    api_handshake(fd, 0, api);
    ::close(fd);
    return static_cast<std::uint64_t>(api.features);
  }();
  return offered;
}

}  // namespace

bool sigbus_supported() { return (offered_features() & UFFD_FEATURE_SIGBUS) != 0; }

userfaultfd open_userfaultfd(bool sigbus) {
  const std::uint64_t offered = offered_features();
  std::uint64_t wanted = 0;
  for (const auto& f : required_features) {
    if ((offered & f.bit) == 0) {
      fatal("this kernel (%s) lacks userfaultfd %s, which shared segments need (Linux %s or "
            "later)",
            kernel_release(), f.what, f.since);
    }
    wanted |= f.bit;
  }
  if (sigbus) wanted |= UFFD_FEATURE_SIGBUS;
  // The fault thread learns which thread faulted (to refuse a fault under the node lock).
  if (!sigbus) wanted |= offered & UFFD_FEATURE_THREAD_ID;
  userfaultfd u;
  u.fd = create(u.kernel_faults);
  u.sigbus = sigbus;
  uffdio_api api;
  api_handshake(u.fd, wanted, api);
  return u;
}

userfaultfd open_recording_userfaultfd() {
  const std::uint64_t wanted = UFFD_FEATURE_MISSING_SHMEM | UFFD_FEATURE_MINOR_SHMEM | UFFD_FEATURE_WP_HUGETLBFS_SHMEM |
                               UFFD_FEATURE_SIGBUS | UFFD_FEATURE_WP_ASYNC;
  userfaultfd u;
  if ((offered_features() & wanted) != wanted) return u;
  u.fd = create(u.kernel_faults);
  u.sigbus = true;
  uffdio_api api;
  api_handshake(u.fd, wanted, api);
  return u;
}

}  // namespace squall::memory::detail
