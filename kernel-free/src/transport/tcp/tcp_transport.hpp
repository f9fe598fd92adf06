// SPDX-License-Identifier: BSD-3-Clause
// TCP transport: one authenticated connection per pair of nodes that do not share a host
// (mesh.hpp), non-blocking. Packets are framed (length, kind); a sender writes straight to
// the socket and keeps what the kernel did not take, in order, for the I/O thread to write
// when the socket has room. The I/O thread (epoll) reads whole frames into a queue per
// source, and wakes this node (through the doorbell, which costs nothing when a thread of
// the node is polling). A thread that spins in a wait reads the sockets itself, and the
// I/O thread then stays out of epoll_wait: on this VM a wake-up costs more than the hop. Lost peers: end of stream or a socket error before the peer said
// goodbye; keepalive and a user timeout notice a vanished host within seconds, and heartbeat
// frames on idle links let the watchdog notice a peer whose process stopped.
#pragma once
#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "transport/tcp/mesh.hpp"
#include "transport/held_verdict.hpp"
#include "transport/io_parking.hpp"
#include "transport/network_transport.hpp"

namespace squall::tcp {

class tcp_transport final : public network_transport {
 public:
  using hooks = network_hooks;
  // fds: a connected socket per TCP peer, -1 for the others (connect_mesh). The listener
  // stays open to refuse (and count) late connections.
  tcp_transport(std::vector<int> fds, std::size_t max_packet, listener l, hooks h);
  ~tcp_transport() override;

  bool try_send(int dest, std::span<const std::byte> head, std::span<const std::byte> body) override;
  bool try_send_written(int dest, std::span<const std::byte> head, std::size_t body_size,
                        body_writer write) override;
  std::span<const std::byte> peek(int src) override;
  void release(int src) override;
  // Also reads the sockets (without waiting for the I/O thread), so that a thread spinning
  // in a wait receives without a thread wake-up on the way, as a polling MPI does.
  bool any_incoming() override {
    return queued_.load(std::memory_order_seq_cst) != 0 || poll_sockets();
  }
  bool any_queued() override { return queued_.load(std::memory_order_seq_cst) != 0; }
  std::size_t max_packet() const override { return max_packet_; }
  // Bytes wait to be written to a socket that was full: a waiter keeps polling (and so
  // writing) rather than sleep and leave them to the I/O thread, a wake-up per socket buffer.
  bool moving_data() override;
  // A thread of the node is about to sleep: the I/O thread must watch the sockets now.
  void node_sleeps() override;
  // A thread of the node polls again: the I/O thread leaves epoll_wait and parks.
  void node_polls() override;
  bool reaches(int node) const override { return node < static_cast<int>(conns_.size()) && conns_[node] != nullptr; }
  // Liveness: frames read, and a heartbeat frame on idle links (network_transport.hpp).
  std::uint64_t frames_heard(int node) const override;
  bool in_use(int node) const override;
  void say_alive() override;
  // Says goodbye on every connection; no peer then reads a reset before our data.
  void shutdown(std::int64_t timeout_ns) override;
  // An ending frame on every connection whose lock is free, pushed out for at most 100 ms.
  void say_ending(int lost_node, std::uint32_t silent_ms, const std::string& why) override;
  std::string describe() const override { return "tcp"; }

 private:
  struct connection;
  void io_loop();
  void stop_io_thread();  // once: wakes it wherever it waits and joins it
  void read_available(connection& c);           // the I/O thread
  bool poll_sockets();                          // a polling thread of the node
  std::size_t drain_socket(connection& c);      // with c.read_mu held; returns packets queued
  // With c.out_mu held: gives the kernel what it takes of c's pending bytes (c fails on an
  // error); whether bytes remain.
  bool send_pending(connection& c);
  void write_pending(connection& c);
  bool append_frame(connection& c, std::uint32_t kind, std::span<const std::byte> head,
                    std::span<const std::byte> body, std::size_t body_size, const body_writer* write);
  void peer_failed(connection& c, const std::string& why);

  std::size_t max_packet_;
  listener listener_;
  hooks hooks_;
  std::vector<std::unique_ptr<connection>> conns_;  // by node
  std::atomic<std::size_t> queued_{0};               // packets read and not yet released
  std::atomic<bool> stopping_{false};
  // Set when shutdown begins, after the job's last barrier: a connection that ends from then
  // on (a peer that gave up waiting for our goodbye on a lossy link and closed) is no loss.
  std::atomic<bool> finishing_{false};
  // Bytes the pending buffers gave the kernel, and the count at moving_data's last look.
  std::atomic<std::uint64_t> written_{0}, written_seen_{0};
  // The I/O thread stays out of epoll_wait while a thread of the node polls (that thread
  // reads the sockets), so that arriving data wakes no one.
  io_parking parking_;
  held_verdict failed_link_;  // the first connection that failed, reported by the I/O thread
  int epoll_fd_ = -1, stop_fd_ = -1;
  std::thread io_;
};

}  // namespace squall::tcp
