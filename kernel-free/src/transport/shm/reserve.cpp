// SPDX-License-Identifier: BSD-3-Clause
#include "transport/shm/reserve.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
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

// A number from the first line of a file, or nullopt (no such file, or "max").
std::optional<std::uint64_t> number_in(const std::string& path) {
  std::ifstream in(path);
  std::uint64_t n = 0;
  if (in >> n) return n;
  return std::nullopt;
}

// The room left under this process's memory cgroup limit (v2, or v1's memory controller),
// where the limit can be read; nullopt where there is none.
std::optional<std::uint64_t> cgroup_room() {
  std::ifstream groups("/proc/self/cgroup");
  std::string line;
  while (std::getline(groups, line)) {
    const auto colon = line.find(':'), last = line.rfind(':');
    if (colon == std::string::npos || last == colon) continue;
    const std::string controllers = line.substr(colon + 1, last - colon - 1), path = line.substr(last + 1);
    std::optional<std::uint64_t> limit, used;
    if (controllers.empty()) {
      limit = number_in("/sys/fs/cgroup" + path + "/memory.max");
      used = number_in("/sys/fs/cgroup" + path + "/memory.current");
    } else if (controllers == "memory") {
      limit = number_in("/sys/fs/cgroup/memory" + path + "/memory.limit_in_bytes");
      used = number_in("/sys/fs/cgroup/memory" + path + "/memory.usage_in_bytes");
    }
    if (limit && used) return *limit > *used ? *limit - *used : 0;
  }
  return std::nullopt;
}

// What the host can still give without pushing other programs out (the kernel's
// MemAvailable), and less under a cgroup limit.
std::uint64_t available_memory() {
  std::ifstream info("/proc/meminfo");
  std::string name;
  std::uint64_t kib = 0, available = UINT64_MAX;
  while (info >> name >> kib) {
    info.ignore(INT_MAX, '\n');
    if (name == "MemAvailable:") available = kib * 1024;
  }
  if (const auto room = cgroup_room()) available = std::min(available, *room);
  return available;
}

// Where the bytes would have come from and how many of them are free there. A memfd lives
// on the kernel's own tmpfs, which has no size of its own: its bound is the host's memory
// (and the memory limit of the process's cgroup, which statvfs does not see).
std::string free_space(int fd, const std::string& path, bool memory_short) {
  struct statvfs fs;
  if (!memory_short && ::fstatvfs(fd, &fs) == 0 && fs.f_blocks != 0) {
    const std::string dir = path.substr(0, path.find_last_of('/'));
    return format("%s has %s free", dir.empty() ? "its file system" : dir.c_str(),
                  bytes_text(static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize).c_str());
  }
  return format("this host has %s of memory available (a container's memory limit counts too)",
                bytes_text(available_memory()).c_str());
}

// `memory_short`: refused before asking, since the host's memory is short, rather than by
// the file system.
[[noreturn]] void no_room(int fd, std::size_t bytes, int local_nodes, std::size_t ring_bytes, int err,
                          bool memory_short = false) {
  const std::string path = path_of(fd);
  const std::string where = free_space(fd, path, memory_short);
  struct stat st;
  if (::fstat(fd, &st) == 0 && st.st_nlink > 0) ::unlink(path.c_str());
  const bool dev_shm = path.starts_with("/dev/shm/");
  fatal("cannot reserve the job's shared memory: %s needs %s (%d ring%s of %s for the %d node%s on this "
        "host) but %s (%s). Make room: %sa smaller SQUALL_RING_BYTES (squallrun --ring-bytes), or fewer "
        "nodes per host",
        path.c_str(), bytes_text(bytes).c_str(), local_nodes * local_nodes, local_nodes == 1 ? "" : "s",
        bytes_text(ring_bytes).c_str(), local_nodes, local_nodes == 1 ? "" : "s", where.c_str(), std::strerror(err),
        dev_shm && !memory_short ? "a larger /dev/shm (Docker's is 64 MiB: docker run --shm-size=1g), "
                : "more memory (a container's --memory limit), ");
}

}  // namespace

void reserve_job_memory(int fd, std::size_t bytes, int local_nodes, std::size_t ring_bytes) {
  // tmpfs gives pages until the host runs out, and then the kernel's out-of-memory killer
  // ends whichever programs it chooses (a launcher whose area is 256 GiB killed other jobs
  // first), not this one with a message: the memory is asked for only when it is there.
  if (bytes > available_memory()) no_room(fd, bytes, local_nodes, ring_bytes, ENOMEM, true);
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
