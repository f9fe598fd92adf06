// SPDX-License-Identifier: BSD-3-Clause
// A transport between hosts (TCP, or UCX when Squall is built with it): what the runtime's
// watchdog and finalize need of it beside moving packets. Nodes on one host keep the
// shared-memory transport (routed_transport.hpp).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "transport/transport.hpp"

namespace squall {

// What a network transport needs of the node: a way to wake it, to have its I/O thread handle
// what it took in, to end the job naming a lost peer (and to know which peers it hears), and
// the count of the node's threads polling (the I/O thread keeps out of their way).
struct network_hooks {
  std::function<void()> wake;
  // Runs the handlers of what has arrived, from the I/O thread, when no thread of the node
  // polls and the node lock is free (false if it did not); the I/O thread wakes the node
  // after it all the same, so that the progress thread goes on polling for what follows
  // (serving alone, the I/O thread took an epoll wake-up per packet: a TCP ping-pong went
  // from 17 to 63 us). The first packet then does not wait for the progress thread's
  // wake-up, which the scheduler may leave queued behind a computing program.
  std::function<bool()> serve;
  // Ends the job naming `node`; `silent_ms` (0: it ended): the verdict is that it has been
  // silent that long (a peer's watchdog heard nothing from it).
  std::function<void(int node, const std::string& why, std::uint32_t silent_ms)> lost;
  // Whether this node heard from `node` since a silence of `silent_ms` that a peer saw began.
  std::function<bool(int node, std::uint32_t silent_ms)> hears;
  const std::atomic<std::uint32_t>* polling;
  int me = -1;  // this node
  // Ends this node, saying why, once `lost` has aborted its job (during set-up, where no
  // wait of the node's would).
  std::function<void()> end_if_aborted;
  // By node, a number for its host (equal numbers: one host), so that a failed link's verdict
  // waits for a better one only while a node of the lost one's host may still give it
  // (held_verdict.hpp).
  std::vector<int> host_of;
};

class network_transport : public transport {
 public:
  // Whether `node` is reached through this transport.
  virtual bool reaches(int node) const = 0;
  // Liveness (runtime/watchdog.cpp), off the message path: a count that grows while `node`
  // sends anything, whether its link is still in use (no goodbye, no failure), and a
  // heartbeat on every link that carried nothing since the last call.
  virtual std::uint64_t frames_heard(int node) const = 0;
  virtual bool in_use(int node) const = 0;
  virtual void say_alive() = 0;
  // Orderly end (at finalize): says goodbye to every peer and waits, at most timeout_ns,
  // for every peer's goodbye, so that no peer sees a failure before our last data.
  virtual void shutdown(std::int64_t timeout_ns) = 0;
  // This node ends abnormally (from fatal, any thread): tells the peers it can, in a moment,
  // which node is to blame (`lost_node`, this one for its own error), how long it had been
  // silent (0: it ended), and why. Best effort.
  virtual void say_ending(int lost_node, std::uint32_t silent_ms, const std::string& why) {
    (void)lost_node;
    (void)silent_ms;
    (void)why;
  }
  // For --stats: "tcp", or "ucx (tcp)" with the UCX transports chosen.
  virtual std::string describe() const = 0;

  // One-sided reads (RDMA where the fabric has it; UCX over TCP emulates them with the target's
  // progress, not its program): memory a node registers can be read by its peers. Not offered
  // by default (Squall's TCP transport). Used by the memory layer for segment::copy_from_home.
  virtual bool offers_remote_reads() const { return false; }
  struct registration {
    std::uintptr_t handle = 0;   // for deregister; 0: not registered
    std::vector<std::byte> key;  // what a peer unpacks to read it
  };
  virtual registration register_for_reads(void* base, std::size_t bytes) {
    (void)base;
    (void)bytes;
    return {};
  }
  virtual void deregister(std::uintptr_t handle) { (void)handle; }
  // A key from `node` made usable here (0 if it cannot be), and released.
  virtual std::uintptr_t unpack_key(int node, std::span<const std::byte> key) {
    (void)node;
    (void)key;
    return 0;
  }
  virtual void release_key(std::uintptr_t key) { (void)key; }
  // Copies `bytes` at address `remote` of `node`'s registered memory into `local`, and waits
  // for them; false if the read failed.
  virtual bool read_remote(int node, std::uintptr_t key, std::uintptr_t remote, void* local, std::size_t bytes) {
    (void)node;
    (void)key;
    (void)remote;
    (void)local;
    (void)bytes;
    return false;
  }
};

}  // namespace squall
