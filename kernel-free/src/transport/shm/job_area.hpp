// SPDX-License-Identifier: BSD-3-Clause
// The shared mapping of one job on one host, created by squallrun and inherited by every
// node as a memfd: a header (job identity, the abort flag and its reason), one control
// line per node of the job (doorbell futex, who is awake, lifecycle state), one ring per
// ordered pair of this host's nodes (including src == dst) and one mailbox line per pair. A job spread over many hosts
// thus costs each host rings for its own nodes only, not for every pair in the job.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "transport/shm/mailbox.hpp"

namespace squall::shm {

constexpr std::uint64_t job_magic = 0x53515541'4c4c4a42ull;
constexpr std::uint32_t job_version = 7;

struct alignas(64) job_header {
  std::uint64_t magic;
  std::uint32_t version;
  std::uint32_t nodes;
  std::uint32_t local_nodes;  // on this host: they have rings
  std::uint64_t ring_bytes;
  std::atomic<std::uint32_t> abort;    // an abort_kind, set (after reason) when a node is lost
  std::atomic<std::uint32_t> abort_claimed;  // 1 once a thread of the host is writing the abort
  std::atomic<std::int32_t> lost_node;
  char reason[200];                     // e.g. "killed by signal 9"
  // For how long the node had been silent, when that is why it is lost (a watchdog's
  // verdict, this host's or told by a peer); else 0. Set before abort.
  std::atomic<std::uint32_t> silent_ms;
};

enum abort_kind : std::uint32_t { not_aborted = 0, node_lost = 1, node_unresponsive = 2 };

// Who sleeps on a node's doorbell, as futex bit sets: a ring wakes the program threads asleep
// in a wait when there are any, else every sleeper (the progress thread among them).
enum doorbell_sleeper : std::uint32_t { program_waiter = 1, progress_thread = 2 };

// joining: in squall::init, setting up (over a network, waiting for the others' endpoints).
enum node_state : std::uint32_t { not_started = 0, running = 1, finalized = 2, joining = 3 };

struct alignas(64) node_control {
  std::atomic<std::uint32_t> doorbell;  // futex word: bumped to wake the node
  std::atomic<std::uint32_t> awake;     // threads of the node polling right now
  std::atomic<std::uint32_t> sleepers;  // threads of the node blocked on the doorbell
  std::atomic<std::uint32_t> state;     // node_state
  std::atomic<std::int32_t> pid;
  // The node's TCP endpoint, published for the others when the job runs over TCP.
  std::atomic<std::uint32_t> tcp_ipv4;
  std::atomic<std::uint32_t> tcp_port;  // 0 until published
  std::int32_t local_index;             // among this host's nodes; -1 on another host
  // 1 once the node sleeps only after a heavy fence (common/process_fence.hpp): its
  // senders may then publish with a light one.
  std::atomic<std::uint32_t> light_fences;
  // Bumped by the node's watchdog thread while the process runs (runtime/watchdog.cpp).
  std::atomic<std::uint32_t> heartbeat;
  // Of the sleepers, program threads asleep in a wait (runtime/waiting.cpp): while there are
  // any, a ring wakes only them (doorbell_wakes), and they poll for the node.
  std::atomic<std::uint32_t> waiters_asleep;
  // 1 while a program thread of the node that left a wait still counts as polling
  // (runtime/waiting.cpp, lingering): senders do not ring it then, but a waiter whose reply
  // is late does (shm_transport::nudge_peers). On a line of its own: the node writes it at
  // every wait, and only a late waiter reads it, whereas every sender reads `awake`.
  alignas(64) std::atomic<std::uint32_t> lingering;
  // In a job with more nodes on this host than processors (runtime/wait_yields.cpp): when
  // the node's program last stopped running outside a wait (CLOCK_MONOTONIC, ns), INT64_MAX
  // while it runs so. A waiter whose yield took long reads it to tell this job's computing
  // nodes from other programs.
  std::atomic<std::int64_t> computed_until_ns;
  // Until when (CLOCK_MONOTONIC, ns) the node's pokes do not yield, because its last poke's
  // yield went to another program (common/poke.cpp): a waiter does not poke it before then.
  std::atomic<std::int64_t> pokes_unyielded_until_ns;
};

// The sleepers a ring of c's doorbell wakes.
inline std::uint32_t doorbell_wakes(const node_control& c) {
  return c.waiters_asleep.load(std::memory_order_seq_cst) != 0 ? program_waiter : program_waiter | progress_thread;
}

class job_area {
 public:
  static std::size_t bytes_for(int nodes, int local_nodes, std::size_t ring_bytes);

  // Creates a job in a new memfd (the launcher); the fd is left open and inheritable.
  // `here` marks the nodes on this host (all of them when empty).
  static job_area create(int nodes, std::size_t ring_bytes, int* fd_out, const std::vector<bool>& here = {});
  // The same in a file the caller opened (the bootstrap under a cluster launcher).
  static job_area create_in(int fd, int nodes, std::size_t ring_bytes, const std::vector<bool>& here = {});
  // Maps the job a launcher created (a node).
  static job_area attach(int fd);
  // Whether `size` bytes at `base` (64-byte aligned), written by another process, hold a
  // job of this version whose every ring and mailbox lies inside them; else says why not.
  static bool well_formed(const void* base, std::size_t size, std::string& why);
  // Under a cluster launcher the nodes of a host share the job area by name, in /dev/shm.
  // The host's first node creates the file: fatal when the name exists already (whoever
  // made it) or is a link. The others open it: fatal unless it is a regular file of this
  // user, closed to everyone else.
  static int create_named(const std::string& name);
  static int open_named(const std::string& name);
  // A one-node job in private memory (a program started without the launcher).
  static job_area single(std::size_t ring_bytes);

  job_header& header() const { return *static_cast<job_header*>(base_); }
  node_control& control(int node) const;
  void* ring(int src, int dst) const;  // base of ring src -> dst, both on this host
  pair_line* mailbox_line(int a, int b) const;  // the line shared by a and b, both on this host
  bool on_this_host(int node) const { return control(node).local_index >= 0; }
  int nodes() const { return static_cast<int>(header().nodes); }
  std::size_t ring_bytes() const { return header().ring_bytes; }

  // Marks the job aborted because `node` was lost (or stopped answering; silent for
  // `silent_ms`, if that is the verdict), and wakes every node.
  void abort(int node, const char* reason, abort_kind kind = node_lost, std::uint32_t silent_ms = 0) const;

 private:
  void* base_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace squall::shm
