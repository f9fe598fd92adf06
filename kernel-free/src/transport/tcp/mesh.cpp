// SPDX-License-Identifier: BSD-3-Clause
#include "transport/tcp/mesh.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "common/descriptor_failure.hpp"
#include "common/futex.hpp"
#include "common/log.hpp"
#include "transport/tcp/accepting.hpp"
#include "transport/tcp/handshake.hpp"
#include "transport/tcp/refusals.hpp"

namespace squall::tcp {
namespace {

constexpr std::int64_t attempt_ns = 3'000'000'000;  // a connection attempt's time (connect_to)

// A lower peer this node connects to: its address and how the last attempt went.
struct connection_attempt {
  int peer;
  endpoint where;
  std::string why = "no attempt";
  useconds_t pause_us = 20'000;  // before the next attempt after a broken handshake
  std::int64_t next_at = 0;      // not before then
};

// One attempt at a connection (the socket's fd), or -1 to try again later: the peer is not
// listening yet (as when it never will: a node dead before init, see connect_mesh), or the
// handshake broke or was refused, which is made again after a pause that doubles up to a
// second. A wrong secret is refused there every time, and ends at the deadline (as the
// acceptor's wait for this node does).
int try_to_connect(int me, connection_attempt& a, const job_secret& secret, std::int64_t deadline) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fatal("socket() failed: %s", descriptor_failure(errno).c_str());
  // An attempt has a few seconds: a lost SYN is sent again after 1 s, then 2, 4, 8...; a
  // fresh connection keeps the pace at one or two a few seconds on a lossy network.
  if (const int err = connect_before(fd, a.where, std::min(deadline, now_ns() + attempt_ns)); err != 0) {
    a.why = std::strerror(err);
    ::close(fd);
    return -1;
  }
  configure_connection(fd);
  // The whole set-up time, not the acceptor's time for a handshake: the peer answers only
  // once it has made its own connections downwards, which on a staggered start takes a while.
  const handshake_result r = connect_handshake(fd, me, a.peer, secret, deadline, a.why);
  if (r == handshake_result::done) return fd;
  ::close(fd);
  if (r == handshake_result::refused) {
    fatal("connecting to node %d at %s: %s", a.peer, to_string(a.where).c_str(), a.why.c_str());
  }
  a.next_at = now_ns() + std::int64_t{a.pause_us} * 1000;
  a.pause_us = std::min<useconds_t>(2 * a.pause_us, 1'000'000);
  return -1;
}

}  // namespace

listener::listener(endpoint where) : where_(where) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) fatal("socket() failed: %s", descriptor_failure(errno).c_str());
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
  watch.answer_on(l, secret, over_tcp);  // answers the higher peers waiting here, once aborted
  // The lower peers in turn, round after round: one not listening yet does not keep this node
  // from the others. A node that died before init never listens, and only its host knows;
  // taken in order, every node behind it waited for it until the deadline, while its host
  // mates, which the watch of each connection made tells (setup_watch.hpp), were not reached.
  std::vector<connection_attempt> lower;
  for (int peer = 0; peer < me; ++peer) {
    if (over_tcp[peer]) lower.push_back({peer, endpoints[peer]});
  }
  while (!lower.empty()) {
    if (now_ns() >= deadline) {
      const connection_attempt& a = lower.front();
      fatal("could not connect to node %d at %s within the connect timeout (SQUALL_TCP_TIMEOUT): %s", a.peer,
            to_string(a.where).c_str(), a.why.c_str());
    }
    std::erase_if(lower, [&](connection_attempt& a) {
      if (now_ns() < a.next_at) return false;
      const int fd = try_to_connect(me, a, secret, deadline);
      if (fd < 0) return false;
      fds[a.peer] = fd;
      watch.made(a.peer, fd);
      return true;
    });
    if (!lower.empty()) ::usleep(20'000);  // not listening yet: try again
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
