#include "transport/shm/job_area.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "common/futex.hpp"
#include "common/log.hpp"
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

}  // namespace

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
  if (fd < 0) fatal("memfd_create for the job's shared memory failed: %s", std::strerror(errno));
  *fd_out = fd;
  return create_in(fd, nodes, ring_bytes, here);
}

job_area job_area::create_in(int fd, int nodes, std::size_t ring_bytes, const std::vector<bool>& here) {
  job_area a;
  const int local = count_here(nodes, here);
  a.size_ = bytes_for(nodes, local, ring_bytes);
  if (ftruncate(fd, static_cast<off_t>(a.size_)) != 0) {
    fatal("cannot size the job's shared memory to %zu bytes: %s", a.size_, std::strerror(errno));
  }
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
  const auto& h = a.header();
  if (h.magic != job_magic || h.version != job_version ||
      a.size_ != bytes_for(static_cast<int>(h.nodes), static_cast<int>(h.local_nodes), h.ring_bytes)) {
    fatal("SQUALL_JOB_FD=%d does not hold a job of this Squall version (was squallrun built "
          "from the same tree?)", fd);
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

void job_area::abort(int node, const char* reason, abort_kind kind) const {
  auto& h = header();
  if (h.abort.load() != 0) return;
  std::snprintf(h.reason, sizeof h.reason, "%s", reason);
  h.lost_node.store(node);
  h.abort.store(kind, std::memory_order_seq_cst);
  for (int i = 0; i < nodes(); ++i) {
    control(i).doorbell.fetch_add(1);
    futex_wake_all(&control(i).doorbell);
  }
}

}  // namespace squall::shm
