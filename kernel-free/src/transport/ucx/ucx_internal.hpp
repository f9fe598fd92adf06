// SPDX-License-Identifier: BSD-3-Clause
// What the UCX transport's two files share (ucx_transport.cpp: the message path;
// ucx_setup.cpp: set-up, liveness and the end): the wire header, the counters, and the
// state of peers, arrivals and sends.
#pragma once
#include <ucp/api/ucp.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "common/log.hpp"
#include "stats/counters.hpp"
#include "transport/ucx/ucx_transport.hpp"

namespace squall::ucx {

// The header of every UCX message (a type of namespace scope: send_state holds one).
struct wire_header {
  std::uint32_t from;
  std::uint32_t kind;
  std::uint64_t token;  // the receiver's token for this sender (see ucx_transport.hpp)
};

// Counters (ucx.*; kernel-free/TRANSPORTS.md).
inline const int messages_sent = stats::counter_slot("ucx.messages_sent");
inline const int bytes_sent = stats::counter_slot("ucx.bytes_sent");
inline const int messages_received = stats::counter_slot("ucx.messages_received");
inline const int bytes_received = stats::counter_slot("ucx.bytes_received");
inline const int sends_pending = stats::counter_slot("ucx.sends_pending");  // not complete when handed to UCX
inline const int sends_refused = stats::counter_slot("ucx.sends_refused");  // no room: the engine retries
inline const int rendezvous_received = stats::counter_slot("ucx.rendezvous_received");
inline const int messages_refused = stats::counter_slot("ucx.messages_refused");  // without the peer's token
inline const int io_wakeups = stats::counter_slot("ucx.io_wakeups");
inline const int peers_reached = stats::counter_slot("ucx.peers");

inline void count(int slot, std::uint64_t n = 1) { stats::counter_at(slot).fetch_add(n, std::memory_order_relaxed); }

inline constexpr unsigned am_id = 1;
// ending: the sender ends abnormally; the message is its ending body (transport/endings.hpp).
inline constexpr std::uint32_t kind_packet = 1, kind_goodbye = 2, kind_heartbeat = 3, kind_large = 4, kind_ending = 5;

// A packet this small is sent from a copy on the stack when UCX can complete it at once.
inline constexpr std::size_t immediate_bytes = 1024;
inline constexpr std::size_t max_address_bytes = 1 << 20;

inline void check(ucs_status_t s, const char* what) {
  if (s != UCS_OK) fatal("UCX: %s failed: %s", what, ucs_status_string(s));
}

struct ucx_transport::arrival {
  peer* from = nullptr;
  // Not a vector: a large packet's megabytes need no zeroing before its data lands on them.
  std::unique_ptr<std::byte[]> bytes;
  std::size_t size = 0, capacity = 0;
  bool ready = false;  // under from->in_mu: a rendezvous packet is not, until its data came
};

struct ucx_transport::peer {
  ucx_transport* owner = nullptr;
  int node = -1;
  ucp_ep_h ep = nullptr;
  std::uint64_t token_in = 0;   // what this peer puts in its headers to us
  std::uint64_t token_out = 0;  // what we put in ours to it
  std::mutex in_mu;
  std::deque<std::unique_ptr<arrival>> arrived;
  std::atomic<std::size_t> bytes_in_flight{0};
  std::atomic<bool> want_room{false};
  std::atomic<bool> said_goodbye{false}, ended{false};
  std::atomic<std::uint64_t> heard{0};
  std::atomic<std::uint64_t> frames_out{0};
  std::uint64_t frames_out_seen = 0;  // the watchdog thread only
  // The buffer of the last large packet released, kept for the next (under in_mu): a fresh
  // one of megabytes costs page faults on every transfer.
  std::unique_ptr<std::byte[]> spare;
  std::size_t spare_capacity = 0;
};

struct ucx_transport::send_state {
  peer* to = nullptr;
  wire_header header{};
  std::vector<std::byte> bytes;  // the packet, kept until UCX is done with it
  // A large packet: the header with the packet's head behind it; the data stays the
  // caller's, and `done(ctx)` tells it when UCX has read it.
  std::vector<std::byte> large_header;
  const std::byte* large_data = nullptr;
  std::size_t large_bytes = 0;
  void (*done)(void*) = nullptr;
  void* ctx = nullptr;
};

}  // namespace squall::ucx
