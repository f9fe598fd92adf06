// SPDX-License-Identifier: BSD-3-Clause
// tcp_pingpong_raw: the floor of tcp_pingpong. Two processes, one TCP connection (TCP_NODELAY,
// blocking sockets, default buffer sizes), the same exchanges as tcp_pingpong_am:
//   raw_tcp_rtt_us       8 bytes there, 8 bytes back, each end sleeping in recv;
//   raw_bw_gbs           --bulk-bytes there, each acknowledged by 8 bytes back before the next;
//   raw_tcp_spin_rtt_us  the round trip again with both ends polling recv (MSG_DONTWAIT), as
//                        a busy-polling transport (Open MPI's) does: without the wake-ups.
// By default the program forks itself into the two ends on --address (127.0.0.1). With
// --role server / --role client the two ends run separately (e.g. in two network namespaces
// joined by a veth pair), given the same plan options.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "pingpong.hpp"

namespace {

namespace tp = squall::bench::tcp_pingpong;

constexpr const char* usage =
    "usage: tcp_pingpong_raw [options] [--address A] [--port P] [--role both|server|client]\n"
    "  --address A        IPv4 address the server listens on and the client connects to (127.0.0.1)\n"
    "  --port P           its port (default 0: any free one; needed by --role client)\n"
    "  --role R           both (default: fork into server and client), server or client\n";

struct endpoint {
  std::string address = "127.0.0.1";
  int port = 0;
  std::string role = "both";
};

int parse_port(const std::string& text) {
  char* end = nullptr;
  const long n = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || n < 0 || n > 65535) {
    throw std::invalid_argument("--port: expected 0..65535, got '" + text + "'");
  }
  return static_cast<int>(n);
}

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what + ": " + std::strerror(errno)); }

sockaddr_in to_sockaddr(const endpoint& e) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(e.port));
  if (inet_pton(AF_INET, e.address.c_str(), &sa.sin_addr) != 1) {
    throw std::invalid_argument("--address: not an IPv4 address: '" + e.address + "'");
  }
  return sa;
}

void no_delay(int fd) {
  const int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) fail("TCP_NODELAY");
}

// A listening socket on e; e.port becomes the port it got.
int listen_on(endpoint& e) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  sockaddr_in sa = to_sockaddr(e);
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || listen(fd, 1) != 0) {
    fail("listening on " + e.address + ":" + std::to_string(e.port));
  }
  socklen_t len = sizeof sa;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) fail("getsockname");
  e.port = ntohs(sa.sin_port);
  return fd;
}

int accept_one(int listener) {
  const int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) fail("accept");
  close(listener);
  no_delay(fd);
  return fd;
}

int connect_to(const endpoint& e) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in sa = to_sockaddr(e);
  if (fd < 0 || connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
    fail("connecting to " + e.address + ":" + std::to_string(e.port));
  }
  no_delay(fd);
  return fd;
}

void send_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t r = send(fd, p, n, MSG_NOSIGNAL);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail("send");
    p += r;
    n -= static_cast<std::size_t>(r);
  }
}

// With spin, polls (MSG_DONTWAIT) instead of sleeping in the kernel until data arrives.
void recv_all(int fd, void* data, std::size_t n, bool spin = false) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = recv(fd, p, n, spin ? MSG_DONTWAIT : 0);
    if (r < 0 && (errno == EINTR || (spin && (errno == EAGAIN || errno == EWOULDBLOCK)))) continue;
    if (r < 0) fail("recv");
    if (r == 0) throw std::runtime_error("the other end closed the connection");
    p += r;
    n -= static_cast<std::size_t>(r);
  }
}

// The passive end: echoes every small message, acknowledges every transfer with its number
// (or all ones when it arrived damaged).
void serve(int fd, const tp::plan& p) {
  std::uint64_t v = 0;
  for (const bool spin : {false, true}) {
    for (std::uint64_t i = 0; i < p.total_round_trips(); ++i) {
      recv_all(fd, &v, sizeof v, spin);
      send_all(fd, &v, sizeof v);
    }
  }
  std::vector<std::byte> buf(p.bulk_bytes);
  for (std::uint64_t k = 0; k < p.total_transfers(); ++k) {
    recv_all(fd, buf.data(), buf.size());
    const std::uint64_t ack = tp::marked(buf.data(), buf.size(), k) ? k : ~std::uint64_t{0};
    send_all(fd, &ack, sizeof ack);
  }
}

// The measuring end: the same sequence, timed.
tp::output measure(int fd, const tp::plan& p) {
  static_assert(tp::message_bytes == sizeof(std::uint64_t));
  std::uint64_t next = 0;
  auto round_trips = [&](bool spin) {
    return [&, spin](int count) {
      for (int i = 0; i < count; ++i) {
        std::uint64_t v = ++next;
        send_all(fd, &v, sizeof v);
        recv_all(fd, &v, sizeof v, spin);
        if (v != next) throw std::runtime_error("the echo of a small message came back wrong");
      }
    };
  };
  const double rtt = tp::median_seconds_per_op(p.trials, p.iters, round_trips(false));
  const double spin_rtt = tp::median_seconds_per_op(p.trials, p.iters, round_trips(true));
  std::vector<std::byte> buf(p.bulk_bytes);
  std::uint64_t k = 0;
  const double per_transfer = tp::median_seconds_per_op(p.trials, p.bulk_iters, [&](int count) {
    for (int i = 0; i < count; ++i, ++k) {
      tp::mark(buf.data(), buf.size(), k);
      send_all(fd, buf.data(), buf.size());
      std::uint64_t ack = 0;
      recv_all(fd, &ack, sizeof ack);
      if (ack != k) throw std::runtime_error("transfer " + std::to_string(k) + " arrived damaged");
    }
  });
  tp::output out;
  out.add("raw_tcp_rtt_us", tp::rtt_us(rtt));
  out.add("raw_bw_gbs", tp::gb_per_s(p, per_transfer));
  out.add("raw_tcp_spin_rtt_us", tp::rtt_us(spin_rtt));
  return out;
}

// Forks: the child serves, the parent measures; the child's exit status is checked.
tp::output fork_and_measure(endpoint e, const tp::plan& p) {
  const int listener = listen_on(e);
  const pid_t parent = getpid();
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child < 0) fail("fork");
  if (child == 0) {
    // The server must not outlive the client (it would wait in accept or recv forever).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    try {
      const int fd = accept_one(listener);
      serve(fd, p);
      close(fd);
      _exit(0);
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "tcp_pingpong_raw (server): %s\n", ex.what());
      _exit(1);
    }
  }
  close(listener);
  const int fd = connect_to(e);
  tp::output out = measure(fd, p);
  close(fd);
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("the server process failed");
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  endpoint e;
  try {
    const tp::plan p = tp::parse_plan(argc, argv, [&](const std::string& a, auto& value) {
      if (a == "--address") e.address = value();
      else if (a == "--port") e.port = parse_port(value());
      else if (a == "--role") e.role = value();
      else return false;
      return true;
    });
    if (e.role != "both" && e.role != "server" && e.role != "client") {
      throw std::invalid_argument("--role: expected both, server or client, got '" + e.role + "'");
    }
    if (e.role == "client" && e.port == 0) throw std::invalid_argument("--role client needs --port");
    to_sockaddr(e);  // checks the address before anything starts

    if (e.role == "server") {
      const int listener = listen_on(e);
      std::fprintf(stderr, "tcp_pingpong_raw: serving on %s:%d\n", e.address.c_str(), e.port);
      const int fd = accept_one(listener);
      serve(fd, p);
      close(fd);
      return 0;
    }
    const tp::output out = e.role == "client" ? measure(connect_to(e), p) : fork_and_measure(e, p);
    const std::string title = "tcp_pingpong_raw: TCP ping-pong on " + e.address + ", median over trials";
    out.print(title.c_str(), p.json);
    return 0;
  } catch (const std::invalid_argument& ex) {
    std::fprintf(stderr, "tcp_pingpong_raw: %s\n%s%s", ex.what(), usage, tp::plan_usage);
    return 2;
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "tcp_pingpong_raw: %s\n", ex.what());
    return 1;
  }
}
