// SPDX-License-Identifier: BSD-3-Clause
#include "transport/shm/reserve.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <string>

#include "common/log.hpp"
#include "stats/units.hpp"

namespace squall::shm {
namespace {

std::string bytes_text(std::uint64_t bytes) { return stats::human(bytes, stats::unit::bytes); }

// "/dev/shm/squall-..." for a named file, "/memfd:squall-job" for a memfd.
std::string path_of(int fd) {
  char target[PATH_MAX];
  const ssize_t n = ::readlink(format("/proc/self/fd/%d", fd).c_str(), target, sizeof target);
  if (n <= 0) return "the job's shared memory";
  std::string path(target, static_cast<std::size_t>(n));
  constexpr std::string_view deleted = " (deleted)";
  if (path.ends_with(deleted)) path.resize(path.size() - deleted.size());
  return path;
}

// Where the bytes would have come from and how many of them are free there. A memfd lives
// on the kernel's own tmpfs, which has no size of its own: its bound is the host's memory
// (and the memory limit of the process's cgroup, which statvfs does not see).
std::string free_space(int fd, const std::string& path) {
  struct statvfs fs;
  if (::fstatvfs(fd, &fs) == 0 && fs.f_blocks != 0) {
    const std::string dir = path.substr(0, path.find_last_of('/'));
    return format("%s has %s free", dir.empty() ? "its file system" : dir.c_str(),
                  bytes_text(static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize).c_str());
  }
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return format("this host has %s of memory free (a container's memory limit counts too)",
                bytes_text(static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page)).c_str());
}

[[noreturn]] void no_room(int fd, std::size_t bytes, int local_nodes, std::size_t ring_bytes, int err) {
  const std::string path = path_of(fd);
  const std::string where = free_space(fd, path);
  struct stat st;
  if (::fstat(fd, &st) == 0 && st.st_nlink > 0) ::unlink(path.c_str());
  const bool dev_shm = path.starts_with("/dev/shm/");
  fatal("cannot reserve the job's shared memory: %s needs %s (%d ring%s of %s for the %d node%s on this "
        "host) but %s (%s). Make room: %sa smaller SQUALL_RING_BYTES (squallrun --ring-bytes), or fewer "
        "nodes per host",
        path.c_str(), bytes_text(bytes).c_str(), local_nodes * local_nodes, local_nodes == 1 ? "" : "s",
        bytes_text(ring_bytes).c_str(), local_nodes, local_nodes == 1 ? "" : "s", where.c_str(), std::strerror(err),
        dev_shm ? "a larger /dev/shm (Docker's is 64 MiB: docker run --shm-size=1g), "
                : "more memory (a container's --memory limit), ");
}

}  // namespace

void reserve_job_memory(int fd, std::size_t bytes, int local_nodes, std::size_t ring_bytes) {
  int rc;
  do {
    rc = ::fallocate(fd, 0, 0, static_cast<off_t>(bytes));
  } while (rc != 0 && errno == EINTR);
  if (rc == 0 || errno == EOPNOTSUPP) return;  // not tmpfs: its pages are not ours to reserve
  if (errno == ENOSPC || errno == ENOMEM || errno == EFBIG) no_room(fd, bytes, local_nodes, ring_bytes, errno);
  fatal("cannot reserve %s for the job's shared memory %s: %s", bytes_text(bytes).c_str(), path_of(fd).c_str(),
        std::strerror(errno));
}

}  // namespace squall::shm
