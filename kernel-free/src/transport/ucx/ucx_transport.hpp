// SPDX-License-Identifier: BSD-3-Clause
// UCX transport: one UCP worker per node, one endpoint per peer it reaches, packets as UCP
// active messages, eager; a bulk transfer whole, by UCX's rendezvous from the caller's buffer
// (try_send_large). UCX picks the fabric (verbs, RoCE, TCP, shared memory) per UCX_TLS and
// UCX_NET_DEVICES, as for any UCX program. Built as a module the runtime loads when a job
// asks for UCX (plugin.hpp); ucx_transport.cpp is the message path, ucx_setup.cpp the rest.
//
// Trust: UCX does not authenticate. Endpoints are made from worker addresses exchanged over
// the job's authenticated TCP connections (tcp/mesh.hpp, which prove the job's secret), and
// with them each node hands each peer a random token that peer must put in the header of
// every message it sends here. A message without the right token is dropped before anything
// reads it, and counted (ucx.messages_refused); the set-up sockets are closed afterwards (by
// the runtime, which until then says through them why the node ends, if it does).
//
// Progress: a thread of the node that polls (any_incoming) progresses the worker itself; when
// none does, an I/O thread waits on the worker's event descriptor and wakes the node when a
// packet arrives, as the TCP transport's I/O thread does with its sockets.
//
// Lost peers: endpoints to other hosts use UCX's peer error handling, so a peer that fails is
// reported by UCX (and the job ends, naming it) instead of hanging the others; goodbyes at
// finalize tell an orderly end from a loss; heartbeats on idle links feed the watchdog.
#pragma once
#include <ucp/api/ucp.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "transport/held_verdict.hpp"
#include "transport/io_parking.hpp"
#include "transport/network_transport.hpp"

namespace squall::ucx {

class ucx_transport final : public network_transport {
 public:
  using hooks = network_hooks;
  // sockets: a connected, authenticated socket per peer to reach over UCX, -1 for the others
  // (tcp::connect_mesh); used to exchange worker addresses and tokens; the caller closes them. Fatal,
  // naming the peer, when the exchange does not finish by `deadline_ns` or UCX fails.
  // same_host: by node, whether it runs on this host. Endpoints to other hosts use UCX's peer
  // error handling; UCX 1.13's shared-memory transports do not offer it, so endpoints on this
  // host go without, and the watchdog's own watch of this host's nodes reports their loss.
  ucx_transport(int me, const std::vector<int>& sockets, const std::vector<bool>& same_host, std::size_t max_packet,
                hooks h, std::int64_t deadline_ns);
  ~ucx_transport() override;
  ucx_transport(const ucx_transport&) = delete;
  ucx_transport& operator=(const ucx_transport&) = delete;

  bool try_send(int dest, std::span<const std::byte> head, std::span<const std::byte> body) override;
  bool try_send_written(int dest, std::span<const std::byte> head, std::size_t body_size,
                        body_writer write) override;
  // Large packets (a bulk transfer whole): the head travels in UCX's message header and the
  // data by UCX's rendezvous, read from the caller's buffer.
  bool sends_large(int dest) const override { return reaches(dest) && max_header_ >= large_head_bytes; }
  bool try_send_large(int dest, std::span<const std::byte> head, std::span<const std::byte> data,
                      void (*done)(void*), void* ctx) override;
  std::span<const std::byte> peek(int src) override;
  void release(int src) override;
  bool any_incoming() override;
  bool any_queued() override {
    return queued_.load(std::memory_order_seq_cst) != 0 && incomplete_.load(std::memory_order_relaxed) == 0;
  }
  // A large packet still being sent or received by rendezvous. A waiter that finds no large
  // send left also finds its completion (on_send_done: acquire, against its release).
  bool moving_data() override {
    return large_sends_.load(std::memory_order_acquire) != 0 || incomplete_.load(std::memory_order_relaxed) != 0;
  }
  std::size_t max_packet() const override { return max_packet_; }
  void node_sleeps() override;
  void node_polls() override;

  bool reaches(int node) const override { return node < static_cast<int>(peers_.size()) && peers_[node] != nullptr; }
  std::uint64_t frames_heard(int node) const override;
  bool in_use(int node) const override;
  void say_alive() override;
  void shutdown(std::int64_t timeout_ns) override;
  void say_ending(int lost_node, std::uint32_t silent_ms, const std::string& why) override;
  std::string describe() const override { return description_; }

  // One-sided reads by UCX's RMA get (ucp_mem_map, ucp_rkey_pack, ucp_get_nbx); offered
  // unless UCX carries them over TCP (ucx_reads.cpp), or as SQUALL_REMOTE_READS says.
  bool offers_remote_reads() const override;
  registration register_for_reads(void* base, std::size_t bytes) override;
  void deregister(std::uintptr_t handle) override;
  std::uintptr_t unpack_key(int node, std::span<const std::byte> key) override;
  void release_key(std::uintptr_t key) override;
  bool read_remote(int node, std::uintptr_t key, std::uintptr_t remote, void* local, std::size_t bytes) override;

  // Internal, for UCX's callbacks.
  struct peer;
  struct arrival;
  struct send_state;
  void on_message(const void* header, std::size_t header_length, void* data, std::size_t length,
                  const ucp_am_recv_param_t* param);
  void on_send_done(send_state* s);
  void on_peer_error(peer& p, ucs_status_t status);
  void on_arrival_complete(arrival& a);

 private:
  void start_send(std::unique_ptr<send_state> s, std::uint32_t flags);
  std::size_t in_flight_limit() const { return 4 * max_packet_; }
  bool out_of_room(peer& p);
  bool send_frame(peer& p, std::uint32_t kind, std::span<const std::byte> head, std::span<const std::byte> body,
                  std::size_t body_size, const body_writer* write);
  bool progress_once();  // progresses the worker unless another thread is; true if it did work
  // Progresses until what was handed to UCX for each live peer has left, or `deadline`.
  void drain_sends(std::int64_t deadline);
  void io_loop();
  void stop_io_thread();
  void exchange_addresses(const std::vector<int>& sockets, const std::vector<bool>& same_host,
                          std::int64_t deadline_ns);

  static constexpr std::size_t large_head_bytes = 16 + 16 + 64 + 1024;  // ours, a record's head, its arguments
  int me_;
  std::size_t max_packet_;
  std::size_t max_header_ = 0;  // the largest UCX message header (ucp_worker_query)
  hooks hooks_;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::vector<std::unique_ptr<peer>> peers_;  // by node; null for nodes not reached here
  std::string description_;
  std::mutex progress_mu_;                 // one thread progresses the worker at a time
  std::atomic<std::size_t> queued_{0};     // packets arrived whole and not yet released
  std::atomic<std::size_t> incomplete_{0};  // rendezvous packets whose data is still coming
  std::atomic<std::size_t> large_sends_{0};  // large packets UCX has not finished sending
  std::atomic<bool> stopping_{false};
  std::atomic<bool> closing_{false};  // in shutdown: a peer's failure is no loss any more
  std::mutex alive_mu_;                // heartbeats (the watchdog's thread) and endings against shutdown
  bool arrived_here_ = false;  // the I/O thread's progress took a packet in (under progress_mu_)
  io_parking parking_;
  held_verdict failed_link_;  // the first endpoint that failed, reported by the I/O thread
  int epoll_fd_ = -1, stop_fd_ = -1, worker_fd_ = -1;
  std::thread io_;
};

}  // namespace squall::ucx
