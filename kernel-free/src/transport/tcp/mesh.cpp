#include "transport/tcp/mesh.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "common/futex.hpp"
#include "common/log.hpp"
#include "stats/counters.hpp"
#include "transport/tcp/handshake.hpp"

namespace squall::tcp {
namespace {

const int refused = stats::counter_slot("tcp.connections_refused");
constexpr std::int64_t handshake_ns = 2'000'000'000;  // a stranger holds up set-up at most this long

void refuse(int fd, const std::string& why) {
  warn("refused a TCP connection from %s: %s", to_string(peer_of(fd)).c_str(), why.c_str());
  stats::counter_at(refused).fetch_add(1, std::memory_order_relaxed);
  ::close(fd);
}

int connect_to(int me, int peer, const endpoint& e, const job_secret& secret, std::int64_t deadline) {
  std::string why = "no attempt";
  while (now_ns() < deadline) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) fatal("socket() failed: %s", std::strerror(errno));
    const sockaddr_in sa = to_sockaddr(e);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
      why = std::strerror(errno);
      ::close(fd);
      ::usleep(20'000);  // not listening yet: try again
      continue;
    }
    configure_connection(fd);
    // The whole set-up time, not handshake_ns: the peer answers only once it has made its
    // own connections downwards, which on a staggered start takes a while.
    if (connect_handshake(fd, me, peer, secret, deadline, why)) return fd;
    ::close(fd);
    fatal("connecting to node %d at %s: %s", peer, to_string(e).c_str(), why.c_str());
  }
  fatal("could not connect to node %d at %s within the connect timeout (SQUALL_TCP_TIMEOUT): %s", peer,
        to_string(e).c_str(), why.c_str());
}

}  // namespace

listener::listener(endpoint where) : where_(where) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) fatal("socket() failed: %s", std::strerror(errno));
  const int one = 1;
  setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const sockaddr_in sa = to_sockaddr(where);
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd_, 128) != 0) {
    fatal("cannot listen on %s: %s (SQUALL_TCP_ADDR, SQUALL_TCP_PORT)", to_string(where).c_str(),
          std::strerror(errno));
  }
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  where_.port = ntohs(bound.sin_port);
  set_nonblocking(fd_);
}

listener::~listener() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<int> connect_mesh(int me, const std::vector<bool>& over_tcp, const std::vector<endpoint>& endpoints,
                              const listener& l, const job_secret& secret, std::int64_t timeout_ns) {
  const int n = static_cast<int>(over_tcp.size());
  const std::int64_t deadline = now_ns() + timeout_ns;
  std::vector<int> fds(static_cast<std::size_t>(n), -1);
  for (int peer = 0; peer < me; ++peer) {
    if (over_tcp[peer]) fds[peer] = connect_to(me, peer, endpoints[peer], secret, deadline);
  }
  int missing = 0;
  for (int peer = me + 1; peer < n; ++peer) missing += over_tcp[peer];
  while (missing > 0) {
    const int fd = ::accept4(l.fd(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) fatal("accept failed: %s", std::strerror(errno));
      if (now_ns() >= deadline) {
        std::string who;
        for (int peer = me + 1; peer < n; ++peer) {
          if (over_tcp[peer] && fds[peer] < 0) who += (who.empty() ? "" : ", ") + std::to_string(peer);
        }
        fatal("node(s) %s never connected to this node at %s within the connect timeout (SQUALL_TCP_TIMEOUT)",
              who.c_str(), to_string(l.where()).c_str());
      }
      ::usleep(5'000);
      continue;
    }
    configure_connection(fd);
    std::string why;
    const int peer = accept_handshake(fd, me, secret, std::min(deadline, now_ns() + handshake_ns), why);
    if (peer < 0) {
      refuse(fd, why);
    } else if (peer <= me || peer >= n || !over_tcp[peer] || fds[peer] >= 0) {
      refuse(fd, "node " + std::to_string(peer) + " is not expected to connect here");
    } else {
      fds[peer] = fd;
      --missing;
    }
  }
  return fds;
}

bool refuse_late_connection(const listener& l) {
  const int fd = ::accept4(l.fd(), nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return false;
  refuse(fd, "the job's connections are all made");
  return true;
}

}  // namespace squall::tcp
