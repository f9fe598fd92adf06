// SPDX-License-Identifier: BSD-3-Clause
#include "transport/tcp/accepting.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "common/futex.hpp"
#include "common/log.hpp"
#include "transport/tcp/refusals.hpp"
#include "transport/tcp/socket_io.hpp"

namespace squall::tcp {
namespace {

// A connection not answered by then is dropped. Generous: on a lossy network the challenge
// and the response each wait for TCP's retransmissions (a 30% loss took over 2 s), and a
// stranger holds a place only until a full set needs it (answer_grace_ns).
constexpr std::int64_t handshake_ns = 20'000'000'000;
constexpr std::size_t max_pending = 64;               // handshakes under way at once
// A full set drops its oldest handshake to make room only once that one has had this long to
// answer; until then new connections wait in the kernel's backlog. (Dropping at once lost real
// peers to a stranger reconnecting in a loop: their responses were a few microseconds away.)
constexpr std::int64_t answer_grace_ns = 250'000'000;
constexpr std::int64_t poll_ns = 100'000'000;         // the caller checks its deadline this often

bool send_now(int fd, std::span<const std::byte> bytes) {  // a fresh socket's buffer takes it whole
  return ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT) == static_cast<ssize_t>(bytes.size());
}

}  // namespace

int accept_connection(const listener& l) {
  for (;;) {
    const int fd = ::accept4(l.fd(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) return fd;
    switch (errno) {
      case EAGAIN:
#if EWOULDBLOCK != EAGAIN
      case EWOULDBLOCK:
#endif
      case EMFILE:  // out of descriptors or memory: try again on the next turn
      case ENFILE:
      case ENOBUFS:
      case ENOMEM:
        return -1;
      case EBADF:
      case EINVAL:
      case ENOTSOCK:
      case EFAULT:
        fatal("accept failed: %s", std::strerror(errno));
      default:  // EINTR, or a connection that failed before it was accepted (ECONNABORTED...)
        continue;
    }
  }
}

accepting::accepting(int me, int n, const std::vector<bool>& over_tcp, const listener& l, const job_secret& secret,
                     std::vector<int>& fds)
    : me_(me), n_(n), over_tcp_(over_tcp), l_(l), secret_(secret), fds_(fds) {}

accepting::~accepting() {
  for (const pending& p : pending_) refuse_connection(p.fd, p.from, "the job's connections are all made");
}

bool accepting::has_room(std::int64_t now) const {
  return pending_.size() < max_pending || now >= pending_.front().started + answer_grace_ns;
}

int accepting::take_new_connections() {
  int connected = 0;
  for (;;) {
    if (pending_.size() >= max_pending) {
      if (!has_room(now_ns())) break;  // the rest waits in the kernel's backlog
      pending& oldest = pending_.front();
      const int done = advance(oldest);
      if (done < 0) refuse_connection(oldest.fd, oldest.from, "too many connections in handshake at once (dropped the oldest)");
      connected += std::max(done, 0);
      pending_.pop_front();
    }
    const int fd = accept_connection(l_);
    if (fd < 0) break;
    configure_connection(fd);
    const std::int64_t now = now_ns();
    pending p{fd, peer_of(fd), now, now + handshake_ns, acceptor_side(me_, secret_)};
    if (!send_now(fd, p.side.challenge())) {
      refuse_connection(fd, p.from, std::string("sending the challenge: ") + std::strerror(errno));
      continue;
    }
    pending_.push_back(std::move(p));
  }
  return connected;
}

int accepting::advance(pending& p) {
  const ssize_t r = ::recv(p.fd, p.got.data() + p.have, p.got.size() - p.have, MSG_DONTWAIT);
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return -1;
  if (r <= 0) {
    refuse_connection(p.fd, p.from, std::string("waiting for the response: ") +
                                (r == 0 || errno == ECONNRESET ? "connection closed" : std::strerror(errno)));
    return 0;
  }
  p.have += static_cast<std::size_t>(r);
  if (p.have < p.got.size()) return -1;
  std::string why;
  const int peer = p.side.check_response(p.got, why);
  if (peer < 0) {
    refuse_connection(p.fd, p.from, why);
    return 0;
  }
  if (peer >= n_) {
    refuse_connection(p.fd, p.from, "node " + std::to_string(peer) + " is not a node of this job of " + std::to_string(n_) +
                                " nodes (do the hosts start jobs of different sizes?)");
    return 0;
  }
  if (peer <= me_ || !over_tcp_[peer] || fds_[peer] >= 0) {
    refuse_connection(p.fd, p.from, "node " + std::to_string(peer) + " is not expected to connect here");
    return 0;
  }
  if (!send_now(p.fd, p.side.proof())) {
    refuse_connection(p.fd, p.from, std::string("sending the proof: ") + std::strerror(errno));
    return 0;
  }
  fds_[peer] = p.fd;
  return 1;
}

int accepting::step(std::int64_t deadline_ns) {
  std::vector<pollfd> set;
  set.reserve(pending_.size() + 1);
  const std::int64_t start = now_ns();
  std::int64_t wake = std::min(deadline_ns, start + poll_ns);
  if (has_room(start)) {
    set.push_back({l_.fd(), POLLIN, 0});
  } else {  // a full set: listen again once its oldest may be dropped
    set.push_back({-1, 0, 0});
    wake = std::min(wake, pending_.front().started + answer_grace_ns);
  }
  for (const pending& p : pending_) {
    set.push_back({p.fd, POLLIN, 0});
    wake = std::min(wake, p.deadline);
  }
  const std::int64_t left = std::max<std::int64_t>(0, wake - now_ns());
  if (::poll(set.data(), set.size(), static_cast<int>((left + 999'999) / 1'000'000)) < 0 && errno != EINTR) {
    fatal("poll failed while accepting TCP connections: %s", std::strerror(errno));
  }
  int connected = 0;
  const std::int64_t now = now_ns();
  for (std::size_t i = pending_.size(); i-- > 0;) {  // backwards: erasing keeps the earlier indices
    pending& p = pending_[i];
    int done = -1;
    if (set[i + 1].revents != 0) done = advance(p);
    if (done < 0 && now >= p.deadline) {
      refuse_connection(p.fd, p.from, "waiting for the response: timed out");
      done = 0;
    }
    if (done < 0) continue;
    connected += done;
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  connected += take_new_connections();  // also when handshakes just ended made room
  return connected;
}

}  // namespace squall::tcp
