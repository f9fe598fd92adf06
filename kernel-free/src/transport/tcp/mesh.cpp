// SPDX-License-Identifier: BSD-3-Clause
#include "transport/tcp/mesh.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "common/futex.hpp"
#include "common/log.hpp"
#include "transport/tcp/accepting.hpp"
#include "transport/tcp/handshake.hpp"
#include "transport/tcp/refusals.hpp"

namespace squall::tcp {
namespace {

constexpr std::int64_t attempt_ns = 3'000'000'000;  // a connection attempt's time (connect_to)

// Until the deadline: a connection that broke or was refused during the handshake is made
// again, after a pause that doubles up to a second. A wrong secret is refused there every
// time, and ends here at the deadline (as the acceptor's wait for this node does).
int connect_to(int me, int peer, const endpoint& e, const job_secret& secret, std::int64_t deadline) {
  std::string why = "no attempt";
  useconds_t pause_us = 20'000;
  while (now_ns() < deadline) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) fatal("socket() failed: %s", std::strerror(errno));
    // An attempt has a few seconds: a lost SYN is sent again after 1 s, then 2, 4, 8...; a
    // fresh connection keeps the pace at one or two a few seconds on a lossy network.
    if (const int err = connect_before(fd, e, std::min(deadline, now_ns() + attempt_ns)); err != 0) {
      why = std::strerror(err);
      ::close(fd);
      ::usleep(20'000);  // not listening yet: try again
      continue;
    }
    configure_connection(fd);
    // The whole set-up time, not the acceptor's time for a handshake: the peer answers only
    // once it has made its own connections downwards, which on a staggered start takes a while.
    const handshake_result r = connect_handshake(fd, me, peer, secret, deadline, why);
    if (r == handshake_result::done) return fd;
    ::close(fd);
    if (r == handshake_result::refused) fatal("connecting to node %d at %s: %s", peer, to_string(e).c_str(), why.c_str());
    ::usleep(pause_us);
    pause_us = std::min<useconds_t>(2 * pause_us, 1'000'000);
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
                              const listener& l, const job_secret& secret, std::int64_t timeout_ns, int silence_s,
                              setup_watch& watch) {
  const int n = static_cast<int>(over_tcp.size());
  const std::int64_t deadline = now_ns() + timeout_ns;
  std::vector<int> fds(static_cast<std::size_t>(n), -1);
  for (int peer = 0; peer < me; ++peer) {
    if (!over_tcp[peer]) continue;
    fds[peer] = connect_to(me, peer, endpoints[peer], secret, deadline);
    watch.made(peer, fds[peer]);
  }
  int missing = 0;
  for (int peer = me + 1; peer < n; ++peer) missing += over_tcp[peer];
  {
    accepting a(me, n, over_tcp, l, secret, fds);
    while (missing > 0) {
      if (now_ns() >= deadline) {
        std::string who;
        for (int peer = me + 1; peer < n; ++peer) {
          if (over_tcp[peer] && fds[peer] < 0) who += (who.empty() ? "" : ", ") + std::to_string(peer);
        }
        fatal("node(s) %s never connected to this node at %s within the connect timeout (SQUALL_TCP_TIMEOUT)",
              who.c_str(), to_string(l.where()).c_str());
      }
      missing -= a.step(deadline);
      for (int peer = me + 1; peer < n; ++peer) {
        if (fds[peer] >= 0) watch.made(peer, fds[peer]);
      }
    }
  }  // refuses the handshakes still under way
  report_refusals();
  for (const int fd : fds) {
    if (fd >= 0) detect_loss_after(fd, silence_s);
  }
  return fds;
}

bool refuse_late_connection(const listener& l) {
  const int fd = accept_connection(l);
  if (fd < 0) return false;
  refuse_connection(fd, peer_of(fd), "the job's connections are all made");
  return true;
}

}  // namespace squall::tcp
