// SPDX-License-Identifier: BSD-3-Clause
// The UCX transport's message path: sends, arrivals, progress and the I/O thread.
#include "transport/ucx/ucx_transport.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/futex.hpp"
#include "common/log.hpp"
#include "transport/endings.hpp"
#include "transport/ucx/ucx_internal.hpp"

namespace squall::ucx {
namespace {

thread_local bool in_io_thread = false;

}  // namespace

// More than in_flight_limit() bytes handed to UCX and not done with refuses a send (counted);
// the completion that drains it wakes the node, whose engine then retries.
bool ucx_transport::out_of_room(peer& p) {
  if (p.bytes_in_flight.load(std::memory_order_relaxed) <= in_flight_limit()) return false;
  p.want_room.store(true, std::memory_order_seq_cst);
  // Completions may have drained it meanwhile: look again, or nobody would wake us.
  if (p.bytes_in_flight.load(std::memory_order_seq_cst) <= in_flight_limit()) return false;
  count(sends_refused);
  return true;
}

bool ucx_transport::send_frame(peer& p, std::uint32_t kind, std::span<const std::byte> head,
                               std::span<const std::byte> body, std::size_t body_size, const body_writer* write) {
  if (p.ended.load(std::memory_order_relaxed)) return true;  // the peer is gone and the job is ending: drop
  if (kind == kind_packet && out_of_room(p)) return false;
  const std::size_t total = head.size() + body_size;
  const wire_header h{static_cast<std::uint32_t>(me_), kind, p.token_out};
  p.frames_out.fetch_add(1, std::memory_order_relaxed);
  count(messages_sent);
  count(bytes_sent, total);
  auto fill = [&](std::byte* out) {
    if (!head.empty()) std::memcpy(out, head.data(), head.size());
    if (write != nullptr) {
      (*write)(out + head.size());
    } else if (!body.empty()) {
      std::memcpy(out + head.size(), body.data(), body.size());
    }
  };
  std::unique_ptr<send_state> s;
  if (total <= immediate_bytes) {
    alignas(8) std::byte copy[immediate_bytes];
    fill(copy);
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
    const ucs_status_ptr_t r = ucp_am_send_nbx(p.ep, am_id, &h, sizeof h, copy, total, &prm);
    if (r == nullptr) return true;
    if (!UCS_PTR_IS_ERR(r)) fatal("UCX: a send forced to complete at once returned a request");
    // Whatever the reason UCX could not finish it at once, the send below retries it from a
    // copy that lives until UCX is done, and reports a failure there.
    s = std::make_unique<send_state>();
    s->bytes.assign(copy, copy + total);
  } else {
    s = std::make_unique<send_state>();
    s->bytes.resize(total);
    fill(s->bytes.data());
  }
  s->to = &p;
  s->header = h;
  // Eager, whatever the size: a packet is at most max_packet bytes, and a rendezvous costs
  // the receiver a round trip that waits for this node's CPU (a 64 KiB-block stress test on
  // 4 nodes over UCX's TCP: 7.9 s with rendezvous, 0.54 s eager).
  start_send(std::move(s), UCP_AM_SEND_FLAG_EAGER);
  return true;
}

// Hands UCX a send whose header and data `s` holds (or whose data the caller keeps, for a
// large packet); on_send_done ends it, at once or from UCX's completion.
void ucx_transport::start_send(std::unique_ptr<send_state> s, std::uint32_t flags) {
  peer& p = *s->to;
  const bool large = s->done != nullptr;
  const void* header = large ? static_cast<const void*>(s->large_header.data()) : &s->header;
  const std::size_t header_length = large ? s->large_header.size() : sizeof s->header;
  const void* data = large ? s->large_data : s->bytes.data();
  const std::size_t length = large ? s->large_bytes : s->bytes.size();
  p.bytes_in_flight.fetch_add(length, std::memory_order_relaxed);
  ucp_request_param_t prm{};
  prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  prm.flags = flags;
  prm.cb.send = [](void* request, ucs_status_t, void* user_data) {
    auto* state = static_cast<send_state*>(user_data);
    state->to->owner->on_send_done(state);
    ucp_request_free(request);
  };
  prm.user_data = s.get();
  send_state* raw = s.release();
  const ucs_status_ptr_t r = ucp_am_send_nbx(p.ep, am_id, header, header_length, data, length, &prm);
  if (r == nullptr) {
    on_send_done(raw);
  } else if (UCS_PTR_IS_ERR(r)) {
    const ucs_status_t failed = UCS_PTR_STATUS(r);
    on_send_done(raw);
    on_peer_error(p, failed);  // nothing is dropped unsaid: the job ends naming the peer
  } else {
    count(sends_pending);
  }
}

void ucx_transport::on_send_done(send_state* s) {
  peer& p = *s->to;
  const std::size_t size = s->bytes.size() + s->large_bytes;
  const std::size_t left = p.bytes_in_flight.fetch_sub(size, std::memory_order_seq_cst) - size;
  if (s->done != nullptr) {
    s->done(s->ctx);
    large_sends_.fetch_sub(1, std::memory_order_release);  // after the completion (moving_data)
  }
  delete s;
  if (left <= in_flight_limit() && p.want_room.exchange(false, std::memory_order_seq_cst)) hooks_.wake();
}

bool ucx_transport::try_send_large(int dest, std::span<const std::byte> head, std::span<const std::byte> data,
                                   void (*done)(void*), void* ctx) {
  peer& p = *peers_[dest];
  if (p.ended.load(std::memory_order_relaxed)) {  // the peer is gone and the job is ending: drop
    done(ctx);
    return true;
  }
  if (out_of_room(p)) return false;
  auto s = std::make_unique<send_state>();
  s->to = &p;
  s->large_header.resize(sizeof(wire_header) + head.size());
  const wire_header h{static_cast<std::uint32_t>(me_), kind_large, p.token_out};
  std::memcpy(s->large_header.data(), &h, sizeof h);
  std::memcpy(s->large_header.data() + sizeof h, head.data(), head.size());
  s->large_data = data.data();
  s->large_bytes = data.size();
  s->done = done;
  s->ctx = ctx;
  p.frames_out.fetch_add(1, std::memory_order_relaxed);
  count(messages_sent);
  count(bytes_sent, head.size() + data.size());
  large_sends_.fetch_add(1, std::memory_order_relaxed);
  start_send(std::move(s), UCP_AM_SEND_FLAG_RNDV);  // zero-copy where the fabric allows, whatever the size
  return true;
}

bool ucx_transport::try_send(int dest, std::span<const std::byte> head, std::span<const std::byte> body) {
  return send_frame(*peers_[dest], kind_packet, head, body, body.size(), nullptr);
}

bool ucx_transport::try_send_written(int dest, std::span<const std::byte> head, std::size_t body_size,
                                     body_writer write) {
  return send_frame(*peers_[dest], kind_packet, head, {}, body_size, &write);
}

void ucx_transport::on_message(const void* header, std::size_t header_length, void* data, std::size_t length,
                               const ucp_am_recv_param_t* param) {
  const bool rendezvous = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
  wire_header h{};
  peer* p = nullptr;
  if (header_length >= sizeof h) {
    std::memcpy(&h, header, sizeof h);
    if (h.from < peers_.size() && peers_[h.from] != nullptr && peers_[h.from]->token_in == h.token) {
      p = peers_[h.from].get();
    }
  }
  const std::size_t head_length = header_length - (p != nullptr ? sizeof h : 0);
  const bool sized = h.kind == kind_goodbye || h.kind == kind_heartbeat ||
                     ((h.kind == kind_packet || h.kind == kind_ending) && length <= max_packet_);
  const bool well_formed = h.kind == kind_large ? head_length > 0 && head_length <= large_head_bytes
                                                : head_length == 0 && sized && !(h.kind == kind_ending && rendezvous);
  if (p == nullptr || !well_formed) {
    // Not from a peer that proved the job's secret (or not a frame of ours): never read.
    if (stats::counter_at(messages_refused).fetch_add(1, std::memory_order_relaxed) < 3) {
      warn("refused a UCX message (%zu bytes) that carried no valid token of this job's peers", length);
    }
    if (rendezvous) ucp_am_data_release(worker_, data);
    return;
  }
  p->heard.fetch_add(1, std::memory_order_relaxed);
  count(messages_received);
  count(bytes_received, length);
  if (h.kind == kind_goodbye) {
    p->said_goodbye.store(true);
    return;
  }
  if (h.kind == kind_heartbeat) return;
  if (h.kind == kind_ending) {
    p->ended.store(true);  // its endpoint failing next is no news
    report_ending(me_, p->node, static_cast<int>(peers_.size()),
                  {static_cast<const std::byte*>(data), length}, hooks_.lost, hooks_.hears);
    return;
  }
  auto a = std::make_unique<arrival>();
  a->from = p;
  arrival* raw = a.get();
  a->size = head_length + length;
  if (h.kind == kind_large) {
    std::lock_guard g(p->in_mu);
    if (p->spare_capacity >= a->size) {
      a->bytes = std::move(p->spare);
      a->capacity = p->spare_capacity;
      p->spare_capacity = 0;
    }
  }
  if (a->bytes == nullptr) {
    a->bytes.reset(new std::byte[a->size == 0 ? 1 : a->size]);
    a->capacity = a->size;
  }
  // A large packet's head came in the header: the packet is that head, then the data.
  if (head_length != 0) std::memcpy(a->bytes.get(), static_cast<const std::byte*>(header) + sizeof h, head_length);
  if (!rendezvous) {
    if (length != 0) std::memcpy(a->bytes.get() + head_length, data, length);
    a->ready = true;
    {
      std::lock_guard g(p->in_mu);
      p->arrived.push_back(std::move(a));
    }
    queued_.fetch_add(1, std::memory_order_seq_cst);
    if (in_io_thread) arrived_here_ = true;
    return;
  }
  // Rendezvous: the packet keeps its place in the order now, and is ready once its data came.
  count(rendezvous_received);
  incomplete_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard g(p->in_mu);
    p->arrived.push_back(std::move(a));
  }
  ucp_request_param_t prm{};
  prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  prm.cb.recv_am = [](void* request, ucs_status_t status, std::size_t, void* user_data) {
    auto* got = static_cast<arrival*>(user_data);
    if (status != UCS_OK) fatal("UCX: receiving a rendezvous message from node %d failed: %s", got->from->node,
                                ucs_status_string(status));
    got->from->owner->on_arrival_complete(*got);
    ucp_request_free(request);
  };
  prm.user_data = raw;
  const ucs_status_ptr_t r = ucp_am_recv_data_nbx(worker_, data, raw->bytes.get() + head_length, length, &prm);
  if (UCS_PTR_IS_ERR(r)) {
    fatal("UCX: receiving a rendezvous message from node %d failed: %s", p->node, ucs_status_string(UCS_PTR_STATUS(r)));
  }
  if (r == nullptr) on_arrival_complete(*raw);
}

// A rendezvous packet's data arrived: it may now be taken, in its place in the order.
void ucx_transport::on_arrival_complete(arrival& a) {
  {
    std::lock_guard g(a.from->in_mu);
    a.ready = true;
  }
  incomplete_.fetch_sub(1, std::memory_order_relaxed);
  queued_.fetch_add(1, std::memory_order_seq_cst);
  if (in_io_thread) arrived_here_ = true;
}

std::span<const std::byte> ucx_transport::peek(int src) {
  peer* p = peers_[src].get();
  if (p == nullptr) return {};
  std::lock_guard g(p->in_mu);
  if (p->arrived.empty() || !p->arrived.front()->ready) return {};
  const arrival& a = *p->arrived.front();
  return {a.bytes.get(), a.size};  // stays put while callbacks append behind it
}

void ucx_transport::release(int src) {
  peer& p = *peers_[src];
  std::unique_ptr<arrival> done;
  {
    std::lock_guard g(p.in_mu);
    done = std::move(p.arrived.front());
    p.arrived.pop_front();
    if (done->capacity > max_packet_ && done->capacity > p.spare_capacity) {
      p.spare = std::move(done->bytes);
      p.spare_capacity = done->capacity;
    }
  }
  queued_.fetch_sub(1, std::memory_order_relaxed);
}

bool ucx_transport::progress_once() {
  std::unique_lock l(progress_mu_, std::try_to_lock);
  return l.owns_lock() && ucp_worker_progress(worker_) != 0;
}

bool ucx_transport::any_incoming() {
  // A packet behind a rendezvous one still coming is counted but cannot be taken yet: then
  // the worker must progress for the data to come.
  if (queued_.load(std::memory_order_seq_cst) != 0 && incomplete_.load(std::memory_order_relaxed) == 0) return true;
  progress_once();
  return queued_.load(std::memory_order_seq_cst) != 0;
}

// The I/O thread must watch now. Parked, it is rung. In epoll_wait, it is kicked out to arm
// the worker again: a thread of the node may have progressed the worker since it armed, and
// UCX then signals nothing more until it is armed again (unlike a socket, which stays
// readable; without the kick a reply over UCX's shared memory waited for the 100 ms timeout).
void ucx_transport::node_sleeps() {
  if (!parking_.kick()) parking_.wake_if_parked();
}

// A thread of the node polls again: out of epoll_wait, the I/O thread parks (io_parking.hpp).
void ucx_transport::node_polls() { parking_.kick(); }

void ucx_transport::io_loop() {
  in_io_thread = true;
  constexpr std::int64_t parked_ns = 10'000'000;
  constexpr int epoll_ms = 100;
  epoll_event events[3];
  while (!stopping_.load()) {
    failed_link_.report_if_due(hooks_.lost);
    // A thread of the node that polls progresses the worker itself: stay out of its way.
    if (parking_.park_while_polled(*hooks_.polling, stopping_, parked_ns)) continue;
    ucs_status_t armed;
    {
      std::lock_guard g(progress_mu_);
      arrived_here_ = false;
      while (ucp_worker_progress(worker_) != 0) {
      }
      armed = ucp_worker_arm(worker_);
    }
    if (arrived_here_) {  // packets this thread took in: run them, and wake the node to go on
      hooks_.serve();
      hooks_.wake();
    }
    if (armed == UCS_ERR_BUSY) continue;  // more arrived meanwhile
    check(armed, "ucp_worker_arm");
    const int k = parking_.begin_watch(*hooks_.polling) ? ::epoll_wait(epoll_fd_, events, 3, epoll_ms) : 0;
    parking_.end_watch();
    if (k < 0 && errno != EINTR) fatal("epoll_wait failed in the UCX transport: %s", std::strerror(errno));
    if (k > 0) count(io_wakeups);
    for (int i = 0; i < k; ++i) {
      if (events[i].data.fd == parking_.kick_fd()) parking_.drain_kick();
    }
  }
}

void ucx_transport::stop_io_thread() {
  if (!io_.joinable()) return;
  stopping_.store(true);
  const std::uint64_t one = 1;
  [[maybe_unused]] auto r = ::write(stop_fd_, &one, sizeof one);
  parking_.wake();
  io_.join();
}

void ucx_transport::on_peer_error(peer& p, ucs_status_t status) {
  if (p.ended.exchange(true)) return;
  // Once this node is in shutdown every node has passed finalize's barrier: a peer that
  // closes (or dies) now takes nothing from anyone. Waiting for its goodbye instead is not
  // enough: a peer that had ours, and closed, may reset the link before its goodbye was read
  // here ("Endpoint timeout" at the end of a ping-pong, now and then).
  if (p.said_goodbye.load() || closing_.load()) {
    failed_link_.ended(p.node);
    return;
  }
  failed_link_.failed(p.node, std::string("its UCX endpoint failed: ") + ucs_status_string(status));  // a better verdict may follow
}


}  // namespace squall::ucx
