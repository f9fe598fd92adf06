// SPDX-License-Identifier: BSD-3-Clause
#include "transport/shm/job_area.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "common/descriptor_failure.hpp"
#include "common/futex.hpp"
#include "common/log.hpp"
#include "transport/shm/reserve.hpp"
#include "transport/shm/ring.hpp"

namespace squall::shm {
namespace {

std::size_t controls_offset() { return sizeof(job_header); }
std::size_t rings_offset(int nodes) { return controls_offset() + sizeof(node_control) * nodes; }
std::size_t mailboxes_offset(int nodes, int local_nodes, std::size_t ring_bytes) {
  return rings_offset(nodes) + ring_stride(ring_bytes) * static_cast<std::size_t>(local_nodes) * local_nodes;
}

int count_here(int nodes, const std::vector<bool>& here) {
  if (here.empty()) return nodes;
  if (static_cast<int>(here.size()) != nodes) fatal("job area: %zu host marks for %d nodes", here.size(), nodes);
  int local = 0;
  for (bool h : here) local += h;
  return local;
}

void init(void* base, int nodes, int local_nodes, std::size_t ring_bytes, const std::vector<bool>& here) {
  auto* h = new (base) job_header{};
  h->magic = job_magic;
  h->version = job_version;
  h->nodes = static_cast<std::uint32_t>(nodes);
  h->local_nodes = static_cast<std::uint32_t>(local_nodes);
  h->ring_bytes = ring_bytes;
  h->lost_node.store(-1);
  auto* controls = static_cast<node_control*>(static_cast<void*>(static_cast<char*>(base) + controls_offset()));
  int next = 0;
  for (int i = 0; i < nodes; ++i) controls[i].local_index = here.empty() || here[i] ? next++ : -1;
}

// bytes_for for sizes read from another process: false when the sum does not fit.
bool checked_bytes_for(std::uint64_t nodes, std::uint64_t local, std::uint64_t ring_bytes, std::size_t& out) {
  std::size_t pairs, rings, lines;
  return !__builtin_mul_overflow(local, local, &pairs) &&
         !__builtin_mul_overflow(pairs, ring_stride(ring_bytes), &rings) &&
         !__builtin_mul_overflow(pairs, sizeof(pair_line), &lines) &&
         !__builtin_add_overflow(rings_offset(static_cast<int>(nodes)), rings, &out) &&
         !__builtin_add_overflow(out, lines, &out);
}

}  // namespace

bool job_area::well_formed(const void* base, std::size_t size, std::string& why) {
  constexpr std::uint32_t max_nodes = 1 << 20;
  if (size < sizeof(job_header)) {
    why = "too small for a job's header";
    return false;
  }
  const auto& h = *static_cast<const job_header*>(base);
  if (h.magic != job_magic || h.version != job_version) {
    why = "not a job of this Squall version";
    return false;
  }
  std::size_t expected = 0;
  if (h.nodes == 0 || h.nodes > max_nodes || h.local_nodes > h.nodes || h.ring_bytes < 64 ||
      h.ring_bytes > (std::uint64_t{1} << 30) || (h.ring_bytes & (h.ring_bytes - 1)) != 0 ||
      !checked_bytes_for(h.nodes, h.local_nodes, h.ring_bytes, expected) || expected != size) {
    why = "its header does not match its size";
    return false;
  }
  // This host's nodes are numbered 0, 1, ... in node order, the others -1 (init).
  const auto* controls = reinterpret_cast<const node_control*>(static_cast<const char*>(base) + controls_offset());
  std::int32_t next = 0;
  for (std::uint32_t i = 0; i < h.nodes; ++i) {
    const std::int32_t index = controls[i].local_index;
    if (index != -1 && index != next) {
      why = "node " + std::to_string(i) + " has a wrong place among this host's nodes";
      return false;
    }
    next += index == next;
  }
  if (static_cast<std::uint32_t>(next) != h.local_nodes) {
    why = "it counts its host's nodes wrong";
    return false;
  }
  return true;
}

std::size_t job_area::bytes_for(int nodes, int local_nodes, std::size_t ring_bytes) {
  return mailboxes_offset(nodes, local_nodes, ring_bytes) +
         sizeof(pair_line) * static_cast<std::size_t>(local_nodes) * local_nodes;
}

node_control& job_area::control(int node) const {
  return static_cast<node_control*>(static_cast<void*>(static_cast<char*>(base_) + controls_offset()))[node];
}

void* job_area::ring(int src, int dst) const {
  const int s = control(src).local_index, d = control(dst).local_index;
  if (s < 0 || d < 0) fatal("no shared-memory ring from node %d to node %d: they are on different hosts", src, dst);
  return static_cast<char*>(base_) + rings_offset(nodes()) +
         ring_stride(ring_bytes()) * (static_cast<std::size_t>(s) * header().local_nodes + d);
}

pair_line* job_area::mailbox_line(int a, int b) const {
  const int s = control(a).local_index, d = control(b).local_index;
  if (s < 0 || d < 0) fatal("no shared-memory mailbox between nodes %d and %d: they are on different hosts", a, b);
  const int lo = std::min(s, d), hi = std::max(s, d);
  const auto local = static_cast<int>(header().local_nodes);
  return reinterpret_cast<pair_line*>(static_cast<char*>(base_) +
                                      mailboxes_offset(nodes(), local, ring_bytes())) +
         static_cast<std::size_t>(lo) * local + hi;
}

job_area job_area::create(int nodes, std::size_t ring_bytes, int* fd_out, const std::vector<bool>& here) {
  const int fd = memfd_create("squall-job", 0);
  if (fd < 0) fatal("memfd_create for the job's shared memory failed: %s", descriptor_failure(errno).c_str());
  *fd_out = fd;
  return create_in(fd, nodes, ring_bytes, here);
}

int job_area::create_named(const std::string& name) {
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_NOFOLLOW | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    fatal("cannot create the job's shared memory %s: %s%s", name.c_str(), descriptor_failure(errno).c_str(),
          errno == EEXIST ? " (someone else made a file of that name: refusing to share it)" : "");
  }
  return fd;
}

int job_area::open_named(const std::string& name) {
  const int fd = ::shm_open(name.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
  if (fd < 0) fatal("cannot open the job's shared memory %s: %s", name.c_str(), descriptor_failure(errno).c_str());
  struct stat st;
  if (fstat(fd, &st) != 0) fatal("cannot inspect the job's shared memory %s: %s", name.c_str(), std::strerror(errno));
  if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
    fatal("the job's shared memory %s belongs to uid %u with mode %03o, not to this user (uid %u) alone: "
          "someone else made it; refusing to use it", name.c_str(), static_cast<unsigned>(st.st_uid),
          static_cast<unsigned>(st.st_mode & 0777), static_cast<unsigned>(geteuid()));
  }
  return fd;
}

job_area job_area::create_in(int fd, int nodes, std::size_t ring_bytes, const std::vector<bool>& here) {
  job_area a;
  const int local = count_here(nodes, here);
  a.size_ = bytes_for(nodes, local, ring_bytes);
  if (ftruncate(fd, static_cast<off_t>(a.size_)) != 0) {
    fatal("cannot size the job's shared memory to %zu bytes: %s", a.size_, std::strerror(errno));
  }
  reserve_job_memory(fd, a.size_, local, ring_bytes);
  a.base_ = mmap(nullptr, a.size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (a.base_ == MAP_FAILED) fatal("cannot map the job's shared memory: %s", std::strerror(errno));
  init(a.base_, nodes, local, ring_bytes, here);
  return a;
}

job_area job_area::attach(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) < sizeof(job_header)) {
    fatal("SQUALL_JOB_FD=%d is not a Squall job (start the program with squallrun)", fd);
  }
  job_area a;
  a.size_ = static_cast<std::size_t>(st.st_size);
  a.base_ = mmap(nullptr, a.size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (a.base_ == MAP_FAILED) fatal("cannot map the job's shared memory: %s", std::strerror(errno));
  if (std::string why; !well_formed(a.base_, a.size_, why)) {
    fatal("SQUALL_JOB_FD=%d does not hold a job of this Squall version (was squallrun built "
          "from the same tree?): %s", fd, why.c_str());
  }
  close(fd);
  return a;
}

job_area job_area::single(std::size_t ring_bytes) {
  job_area a;
  a.size_ = bytes_for(1, 1, ring_bytes);
  a.base_ = mmap(nullptr, a.size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (a.base_ == MAP_FAILED) fatal("cannot map the node's message memory: %s", std::strerror(errno));
  init(a.base_, 1, 1, ring_bytes, {});
  return a;
}

void job_area::abort(int node, const char* reason, abort_kind kind, std::uint32_t silent_ms) const {
  auto& h = header();
  // The first to claim it writes the loss whole; another thread or node of the host ending
  // the job at the same moment leaves it be (each writing its own reason tore it).
  std::uint32_t unclaimed = 0;
  if (!h.abort_claimed.compare_exchange_strong(unclaimed, 1)) return;
  std::snprintf(h.reason, sizeof h.reason, "%s", reason);
  h.lost_node.store(node);
  h.silent_ms.store(silent_ms);
  h.abort.store(kind, std::memory_order_seq_cst);
  for (int i = 0; i < nodes(); ++i) {
    control(i).doorbell.fetch_add(1);
    futex_wake_all(&control(i).doorbell);
  }
}

}  // namespace squall::shm
