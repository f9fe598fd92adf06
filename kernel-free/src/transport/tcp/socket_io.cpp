// SPDX-License-Identifier: BSD-3-Clause
#include "transport/tcp/socket_io.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/futex.hpp"
#include "common/log.hpp"

namespace squall::tcp {

std::string to_string(const endpoint& e) {
  char text[INET_ADDRSTRLEN] = "?";
  const in_addr a{htonl(e.ipv4)};
  inet_ntop(AF_INET, &a, text, sizeof text);
  return std::string(text) + ":" + std::to_string(e.port);
}

bool parse_ipv4(const char* text, std::uint32_t& out) {
  in_addr a{};
  if (inet_pton(AF_INET, text, &a) != 1) return false;
  out = ntohl(a.s_addr);
  return true;
}

sockaddr_in to_sockaddr(const endpoint& e) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(e.port);
  sa.sin_addr.s_addr = htonl(e.ipv4);
  return sa;
}

std::uint32_t first_interface_address() {
  ifaddrs* list = nullptr;
  std::uint32_t found = 0x7f000001;
  if (getifaddrs(&list) != 0) return found;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    if ((i->ifa_flags & IFF_UP) == 0 || (i->ifa_flags & IFF_LOOPBACK) != 0) continue;
    found = ntohl(reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr);
    break;
  }
  freeifaddrs(list);
  return found;
}

endpoint peer_of(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) return {};
  return {ntohl(sa.sin_addr.s_addr), ntohs(sa.sin_port)};
}

void set_nonblocking(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    fatal("cannot make a socket non-blocking: %s", std::strerror(errno));
  }
}

namespace {
void keep_alive(int fd, bool on, int idle_s = 0, int interval_s = 0, int probes = 0) {
  const int yes = on ? 1 : 0;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &yes, sizeof yes);
  if (!on) return;
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof idle_s);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof interval_s);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
}
}  // namespace

void configure_connection(int fd) {
  set_nonblocking(fd);
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void probe_for_a_dead_peer(int fd, bool on) { on ? keep_alive(fd, true, 5, 2, 5) : keep_alive(fd, false); }

// Idle links carry heartbeat frames once a second, so keepalive matters only when those stop
// with nothing else unacknowledged; the user timeout bounds unacknowledged data (a cut link,
// a full window towards a stopped process). Both end 2 s after the watchdog's limit, so that
// its message ("has not answered for N s") comes first. They were 5 s whatever the limit:
// a link down for 4 s, or a process stopped 10 s, ended a job that SQUALL_LIVENESS_S=30 allows.
//
// While a link is down TCP doubles its retransmission timeout (0.2, 0.4, 0.8 ... s), so a
// link back after 4.4 s was heard again only at the retransmission 6.2 s in, and one back
// after 8 s only at 12.6 s: outages of 0.6-0.7 of SQUALL_LIVENESS_S ended the job. With the
// timeout capped at 1 s, a link is heard within about a second of its return. The cap is
// Linux 6.15's (older kernels refuse it and keep their 120 s); with a user timeout set, that
// timeout, not the count of retransmissions (tcp_retries2), still says when a link is dead.
void detect_loss_after(int fd, int silence_s) {
  if (silence_s <= 0) return;
  // The kernel takes at most 127 probes (MAX_TCP_KEEPCNT): longer limits space them out.
  const int interval = (silence_s + 126) / 127, probes = std::max(1, silence_s / interval);
  keep_alive(fd, true, 2, interval, probes);
  const unsigned user_timeout_ms = static_cast<unsigned>(silence_s + 2) * 1000;
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms);
  constexpr int rto_max_option = 44;  // TCP_RTO_MAX_MS, which this system's headers may lack
  const int rto_max_ms = 1000;
  setsockopt(fd, IPPROTO_TCP, rto_max_option, &rto_max_ms, sizeof rto_max_ms);
}

namespace {

// Waits until fd is ready for `events` or the deadline passes.
bool wait_ready(int fd, short events, std::int64_t deadline_ns) {
  for (;;) {
    const std::int64_t left = deadline_ns - now_ns();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left / 1'000'000 + 1));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

}  // namespace

int connect_before(int fd, const endpoint& e, std::int64_t deadline_ns) {
  set_nonblocking(fd);
  const sockaddr_in sa = to_sockaddr(e);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0) return 0;
  if (errno != EINPROGRESS) return errno;
  if (!wait_ready(fd, POLLOUT, deadline_ns)) return ETIMEDOUT;
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

io_result read_full(int fd, void* buf, std::size_t len, std::int64_t deadline_ns) {
  auto* p = static_cast<std::byte*>(buf);
  while (len > 0) {
    const ssize_t r = ::recv(fd, p, len, 0);
    if (r > 0) {
      p += r;
      len -= static_cast<std::size_t>(r);
    } else if (r == 0) {
      return io_result::closed;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_ready(fd, POLLIN, deadline_ns)) return io_result::timeout;
    } else if (errno != EINTR) {
      return errno == ECONNRESET ? io_result::closed : io_result::error;
    }
  }
  return io_result::done;
}

io_result write_full(int fd, const void* buf, std::size_t len, std::int64_t deadline_ns) {
  const auto* p = static_cast<const std::byte*>(buf);
  while (len > 0) {
    const ssize_t r = ::send(fd, p, len, MSG_NOSIGNAL);
    if (r > 0) {
      p += r;
      len -= static_cast<std::size_t>(r);
    } else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_ready(fd, POLLOUT, deadline_ns)) return io_result::timeout;
    } else if (r < 0 && errno != EINTR) {
      return errno == EPIPE || errno == ECONNRESET ? io_result::closed : io_result::error;
    }
  }
  return io_result::done;
}

std::string describe(io_result r) {
  switch (r) {
    case io_result::done: return "done";
    case io_result::timeout: return "timed out";
    case io_result::closed: return "connection closed";
    case io_result::error: return std::string("socket error: ") + std::strerror(errno);
  }
  return "?";
}

}  // namespace squall::tcp
