// SPDX-License-Identifier: BSD-3-Clause
#include "transport/tcp/tcp_transport.hpp"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/descriptor_failure.hpp"
#include "common/futex.hpp"
#include "common/log.hpp"
#include "common/runtime_thread.hpp"
#include "stats/counters.hpp"
#include "transport/endings.hpp"
#include "transport/tcp/frames.hpp"
#include "transport/tcp/refusals.hpp"

namespace squall::tcp {
namespace {

const int frames_sent = stats::counter_slot("tcp.frames_sent");
const int frames_received = stats::counter_slot("tcp.frames_received");
const int bytes_sent = stats::counter_slot("tcp.bytes_sent");
const int bytes_received = stats::counter_slot("tcp.bytes_received");
const int writes_deferred = stats::counter_slot("tcp.writes_deferred");
const int sends_refused = stats::counter_slot("tcp.sends_refused");
const int io_wakeups = stats::counter_slot("tcp.io_wakeups");
const int connections = stats::counter_slot("tcp.connections");  // peers reached over TCP

void count(int slot, std::uint64_t n = 1) { stats::counter_at(slot).fetch_add(n, std::memory_order_relaxed); }

constexpr std::size_t small_frame = 512;  // frames up to this size are copied into one buffer to send

}  // namespace

struct tcp_transport::connection {
  int node = -1, fd = -1;
  endpoint peer;  // kept for the loss report: a dead socket no longer knows it
  // Writing: any thread of the node (under the node lock) and the I/O thread.
  std::mutex out_mu;
  std::vector<std::byte> pending;  // framed bytes the kernel has not taken yet, in order
  std::size_t pending_from = 0;
  bool want_room = false;          // a sender was refused: wake the node once drained
  bool watching_out = false;       // EPOLLOUT armed
  std::atomic<bool> watching_out_hint{false};  // the same, readable without out_mu
  bool failed = false;
  std::uint64_t frames_out = 0, frames_out_seen = 0;  // say_alive: did the link carry anything
  // Reading: the I/O thread, or a thread of the node polling while it waits (read_mu).
  std::mutex read_mu;
  std::vector<std::byte> in;
  std::size_t in_len = 0;
  // Whole packets read, handed to the node's poll.
  std::mutex in_mu;
  std::deque<std::vector<std::byte>> arrived;
  std::atomic<bool> said_goodbye{false}, ended{false};
  std::atomic<std::uint64_t> heard{0};  // reads that brought bytes (under read_mu)

  std::size_t unsent() const { return pending.size() - pending_from; }
};

tcp_transport::tcp_transport(std::vector<int> fds, std::size_t max_packet, listener l, hooks h)
    : max_packet_(max_packet), listener_(std::move(l)), hooks_(std::move(h)), failed_link_(hooks_.host_of) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || stop_fd_ < 0) fatal("cannot create the TCP transport's epoll: %s", descriptor_failure(errno).c_str());
  const auto n = static_cast<std::uint64_t>(fds.size());
  auto watch = [&](int fd, std::uint64_t tag) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) fatal("epoll_ctl failed: %s", std::strerror(errno));
  };
  conns_.resize(fds.size());
  for (std::size_t i = 0; i < fds.size(); ++i) {
    if (fds[i] < 0) continue;
    conns_[i] = std::make_unique<connection>();
    conns_[i]->node = static_cast<int>(i);
    conns_[i]->fd = fds[i];
    conns_[i]->peer = peer_of(fds[i]);
    count(connections);
    conns_[i]->in.resize(2 * (max_packet_ + sizeof(frame_header)));
    watch(fds[i], i);
  }
  watch(listener_.fd(), n);
  watch(stop_fd_, n + 1);
  watch(parking_.kick_fd(), n + 2);
  io_ = start_runtime_thread("squall-tcp-io", [this] { io_loop(); });
}

void tcp_transport::stop_io_thread() {
  if (!io_.joinable()) return;
  stopping_.store(true);
  const std::uint64_t one = 1;
  [[maybe_unused]] auto r = ::write(stop_fd_, &one, sizeof one);  // out of epoll_wait
  parking_.wake();                                                  // out of its parking
  io_.join();
}

tcp_transport::~tcp_transport() {
  stop_io_thread();
  for (auto& c : conns_) {
    if (c) ::close(c->fd);
  }
  ::close(epoll_fd_);
  ::close(stop_fd_);
}

// Called with c.out_mu held. Sends at once when nothing is waiting before it; keeps what
// the kernel does not take. `write` (if given) fills the body in place.
bool tcp_transport::append_frame(connection& c, std::uint32_t kind, std::span<const std::byte> head,
                                 std::span<const std::byte> body, std::size_t body_size,
                                 const body_writer* write) {
  if (c.failed) return true;  // the peer is gone and the job is ending: drop
  if (kind == kind_packet && c.unsent() > 4 * max_packet_) {
    c.want_room = true;
    count(sends_refused);
    return false;
  }
  const frame_header h{static_cast<std::uint32_t>(head.size() + body_size), kind};
  ++c.frames_out;
  const std::size_t total = sizeof h + head.size() + body_size;
  count(frames_sent);
  count(bytes_sent, total);
  std::size_t sent = 0;
  if (c.unsent() == 0 && write == nullptr) {
    ssize_t w;
    if (total <= small_frame) {  // one buffer: cheaper for the kernel than three iovecs
      std::byte frame[small_frame];
      std::memcpy(frame, &h, sizeof h);
      if (!head.empty()) std::memcpy(frame + sizeof h, head.data(), head.size());
      if (!body.empty()) std::memcpy(frame + sizeof h + head.size(), body.data(), body.size());
      w = ::send(c.fd, frame, total, MSG_NOSIGNAL | MSG_DONTWAIT);
    } else {
      iovec iov[3] = {{const_cast<frame_header*>(&h), sizeof h},
                      {const_cast<std::byte*>(head.data()), head.size()},
                      {const_cast<std::byte*>(body.data()), body.size()}};
      msghdr m{};
      m.msg_iov = iov;
      m.msg_iovlen = 3;
      w = ::sendmsg(c.fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    if (w == static_cast<ssize_t>(total)) return true;
    if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      c.failed = true;
      return true;  // the I/O thread reports the loss when it reads the error
    }
    sent = w > 0 ? static_cast<std::size_t>(w) : 0;
  }
  if (c.unsent() == 0) {
    c.pending.clear();
    c.pending_from = 0;
  }
  // Keep bytes [sent, total) of the frame.
  const auto* hb = reinterpret_cast<const std::byte*>(&h);
  auto keep = [&](const std::byte* p, std::size_t len, std::size_t at) {
    if (sent >= at + len) return;
    const std::size_t skip = sent > at ? sent - at : 0;
    c.pending.insert(c.pending.end(), p + skip, p + len);
  };
  keep(hb, sizeof h, 0);
  keep(head.data(), head.size(), sizeof h);
  if (write != nullptr) {
    const std::size_t at = c.pending.size();
    c.pending.resize(at + body_size);
    (*write)(c.pending.data() + at);
  } else {
    keep(body.data(), body.size(), sizeof h + head.size());
  }
  count(writes_deferred);
  if (!c.watching_out) {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT;
    ev.data.u64 = static_cast<std::uint64_t>(c.node);
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
    c.watching_out = true;
    c.watching_out_hint.store(true, std::memory_order_relaxed);
  }
  return true;
}

bool tcp_transport::try_send(int dest, std::span<const std::byte> head, std::span<const std::byte> body) {
  connection& c = *conns_[dest];
  std::lock_guard g(c.out_mu);
  return append_frame(c, kind_packet, head, body, body.size(), nullptr);
}

bool tcp_transport::try_send_written(int dest, std::span<const std::byte> head, std::size_t body_size,
                                     body_writer write) {
  connection& c = *conns_[dest];
  std::lock_guard g(c.out_mu);
  return append_frame(c, kind_packet, head, {}, body_size, &write);
}

std::span<const std::byte> tcp_transport::peek(int src) {
  connection* c = conns_[src].get();
  if (c == nullptr) return {};
  std::lock_guard g(c->in_mu);
  if (c->arrived.empty()) return {};
  return c->arrived.front();  // stays put while the I/O thread appends behind it
}

void tcp_transport::release(int src) {
  connection& c = *conns_[src];
  std::lock_guard g(c.in_mu);
  c.arrived.pop_front();
  queued_.fetch_sub(1, std::memory_order_relaxed);
}

bool tcp_transport::send_pending(connection& c) {
  while (c.unsent() > 0 && !c.failed) {
    const ssize_t w = ::send(c.fd, c.pending.data() + c.pending_from, c.unsent(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) {
      c.pending_from += static_cast<std::size_t>(w);
      written_.fetch_add(static_cast<std::uint64_t>(w), std::memory_order_relaxed);
    } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      break;
    } else if (w < 0 && errno != EINTR) {
      c.failed = true;
    }
  }
  return c.unsent() > 0 && !c.failed;
}

void tcp_transport::write_pending(connection& c) {
  bool room = false;
  {
    std::lock_guard g(c.out_mu);
    if (!send_pending(c)) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = static_cast<std::uint64_t>(c.node);
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
      c.watching_out = false;
      c.watching_out_hint.store(false, std::memory_order_relaxed);
    }
    if (c.want_room && c.unsent() <= 4 * max_packet_) {
      c.want_room = false;
      room = true;
    }
  }
  if (room) hooks_.wake();  // a refused sender retries from its progress loop
}

void tcp_transport::peer_failed(connection& c, const std::string& why) {
  if (c.ended.exchange(true)) return;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
  {
    std::lock_guard g(c.out_mu);
    c.failed = true;
  }
  if (c.said_goodbye.load() || finishing_.load() || stopping_.load()) {  // it finished: not a loss
    failed_link_.ended(c.node);
    return;
  }
  // A connection that died during set-up has no peer address left to read (peer_of).
  const std::string from = c.peer.ipv4 == 0 && c.peer.port == 0 ? "" : " from " + to_string(c.peer);
  failed_link_.failed(c.node, "its TCP connection" + from + " " + why);  // a better verdict may follow
}

void tcp_transport::read_available(connection& c) {
  std::size_t packets;
  {
    std::lock_guard g(c.read_mu);
    packets = drain_socket(c);
  }
  if (packets != 0) {
    hooks_.serve();
    hooks_.wake();
  }
}

// Readiness first, with one poll() over the connections: poll reads it without the socket
// lock, which every recv takes - a spinning recv per connection per turn both costs a full
// receive path and fights the arriving segment's softirq for that lock (measured: a tenth of
// a ping-pong's CPU time was spent spinning on it). Then recv only where data or an error is.
bool tcp_transport::poll_sockets() {
  constexpr std::size_t chunk = 64;
  pollfd set[chunk];
  connection* of[chunk];
  bool any = false;
  std::size_t k = 0;
  auto drain_ready = [&] {
    if (k == 0 || ::poll(set, k, 0) <= 0) {
      k = 0;
      return;
    }
    for (std::size_t i = 0; i < k; ++i) {
      if (set[i].revents == 0 || !of[i]->read_mu.try_lock()) continue;
      any = drain_socket(*of[i]) != 0 || any;
      of[i]->read_mu.unlock();
    }
    k = 0;
  };
  for (auto& c : conns_) {
    if (!c || c->ended.load(std::memory_order_relaxed)) continue;
    if (c->watching_out_hint.load(std::memory_order_relaxed)) write_pending(*c);  // the I/O thread may be parked
    set[k] = {c->fd, POLLIN, 0};
    of[k++] = c.get();
    if (k == chunk) drain_ready();
  }
  drain_ready();
  return any;
}

std::size_t tcp_transport::drain_socket(connection& c) {
  std::size_t packets = 0;
  if (c.ended.load()) return 0;
  for (bool more = true; more;) {
    const std::size_t room = c.in.size() - c.in_len;
    const ssize_t r = ::recv(c.fd, c.in.data() + c.in_len, room, MSG_DONTWAIT);
    if (r == 0) {
      peer_failed(c, "was closed before the node finished");
      break;
    }
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) peer_failed(c, std::string("failed: ") + std::strerror(errno));
      break;
    }
    // A short read emptied the socket: asking again would only cost a system call that says
    // EAGAIN (half the receive calls of a ping-pong); later data is seen by the next poll.
    more = static_cast<std::size_t>(r) == room;
    c.heard.store(c.heard.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    c.in_len += static_cast<std::size_t>(r);
    count(bytes_received, static_cast<std::uint64_t>(r));
    std::size_t at = 0;
    frame_header h;
    std::span<const std::byte> body;
    for (frame_result f; (f = read_frame(std::span(c.in.data() + at, c.in_len - at), max_packet_, h, body)) !=
                         frame_result::incomplete;) {
      if (f == frame_result::corrupt) {
        fatal("corrupt frame (length %u, kind %u) on the TCP connection from node %d", h.length, h.kind, c.node);
      }
      count(frames_received);
      if (h.kind == kind_goodbye) {
        c.said_goodbye.store(true);
      } else if (h.kind == kind_ending) {
        report_ending(hooks_.me, c.node, static_cast<int>(conns_.size()), body, hooks_.lost, hooks_.hears);
      } else if (h.kind == kind_packet) {
        std::lock_guard g(c.in_mu);
        c.arrived.emplace_back(body.begin(), body.end());
        queued_.fetch_add(1, std::memory_order_seq_cst);
        ++packets;
      }
      at += sizeof h + h.length;
    }
    std::memmove(c.in.data(), c.in.data() + at, c.in_len - at);
    c.in_len -= at;
  }
  return packets;
}

bool tcp_transport::moving_data() {
  bool waiting = false;
  for (const auto& c : conns_) {
    if (c && c->watching_out_hint.load(std::memory_order_relaxed)) {
      waiting = true;
      break;
    }
  }
  // Moving: bytes left since the last look. Behind a slow link the socket stays full, and a
  // waiter that spun for as long as bytes waited burnt its core on refused sends.
  const std::uint64_t written = written_.load(std::memory_order_relaxed);
  return written_seen_.exchange(written, std::memory_order_relaxed) != written && waiting;
}

void tcp_transport::node_sleeps() { parking_.wake_if_parked(); }

void tcp_transport::node_polls() { parking_.kick(); }

void tcp_transport::io_loop() {
  const auto n = static_cast<std::uint64_t>(conns_.size());
  // A thread going to sleep hands the sockets over (node_sleeps); these bound what a missed
  // hand-over costs (a wait left without sleeping, with no progress thread to sleep next).
  constexpr std::int64_t parked_ns = 10'000'000;
  constexpr int epoll_ms = 100;
  epoll_event events[32];
  while (!stopping_.load()) {
    failed_link_.report_if_due(hooks_.lost);
    if (parking_.park_while_polled(*hooks_.polling, stopping_, parked_ns)) continue;
    const int k = parking_.begin_watch(*hooks_.polling) ? ::epoll_wait(epoll_fd_, events, 32, epoll_ms) : 0;
    parking_.end_watch();
    if (k < 0) {
      if (errno == EINTR) continue;
      fatal("epoll_wait failed in the TCP transport: %s", std::strerror(errno));
    }
    if (k == 0) continue;
    count(io_wakeups);
    for (int i = 0; i < k; ++i) {
      const std::uint64_t tag = events[i].data.u64;
      if (tag == n + 1) return;  // stop
      if (tag == n + 2) {        // kicked (node_polls)
        parking_.drain_kick();
        continue;
      }
      if (tag == n) {
        while (refuse_late_connection(listener_)) {
        }
        continue;
      }
      connection& c = *conns_[tag];
      if (c.ended.load()) continue;
      if (events[i].events & EPOLLOUT) write_pending(c);
      if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) read_available(c);
    }
  }
}

std::uint64_t tcp_transport::frames_heard(int node) const {
  return conns_[node]->heard.load(std::memory_order_relaxed);
}

bool tcp_transport::in_use(int node) const {
  const connection& c = *conns_[node];
  return !c.said_goodbye.load() && !c.ended.load();
}

void tcp_transport::say_ending(int lost_node, std::uint32_t silent_ms, const std::string& why) {
  const std::vector<std::byte> body = ending_body(lost_node, silent_ms, why, max_packet_);
  const std::int64_t deadline = now_ns() + 100'000'000;
  for (auto& c : conns_) {
    if (!c || c->ended.load()) continue;
    std::unique_lock g(c->out_mu, std::try_to_lock);  // a thread that holds it may be the one ending
    if (!g.owns_lock() || c->failed) continue;
    append_frame(*c, kind_ending, {}, body, body.size(), nullptr);
    while (send_pending(*c) && now_ns() < deadline) {
      pollfd p{c->fd, POLLOUT, 0};
      ::poll(&p, 1, 1);
    }
  }
}

void tcp_transport::say_alive() {
  for (auto& c : conns_) {
    if (!c) continue;
    std::lock_guard g(c->out_mu);
    if (c->frames_out == c->frames_out_seen) append_frame(*c, kind_heartbeat, {}, {}, 0, nullptr);
    c->frames_out_seen = c->frames_out;
  }
}

void tcp_transport::shutdown(std::int64_t timeout_ns) {
  finishing_.store(true);
  for (auto& c : conns_) {
    if (!c) continue;
    std::lock_guard g(c->out_mu);
    append_frame(*c, kind_goodbye, {}, {}, 0, nullptr);
  }
  const std::int64_t deadline = now_ns() + timeout_ns;
  for (auto& c : conns_) {
    while (c && !c->said_goodbye.load() && !c->ended.load() && now_ns() < deadline) ::usleep(200);
  }
  // Our goodbye must have left before we close (the peer may still be reading).
  for (auto& c : conns_) {
    while (c && !c->ended.load() && now_ns() < deadline) {
      {
        std::lock_guard g(c->out_mu);
        if (c->unsent() == 0 || c->failed) break;
      }
      ::usleep(200);
    }
  }
  stop_io_thread();
  report_refusals();  // those not named yet
}

}  // namespace squall::tcp
