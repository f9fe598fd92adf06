// SPDX-License-Identifier: BSD-3-Clause
// Programs for tcp_test, run under `squallrun --transport tcp` with SQUALL_TCP_PORT set (node
// k listens on SQUALL_TCP_PORT + k):
//   strangers     node 0 connects to node 1's port three times as a stranger: silently,
//                 with garbage, and with a handshake under a wrong secret; node 1 must refuse
//                 and count all three (tcp.connections_refused), and the job goes on
//   late-init S   node 1 sleeps S seconds before squall::init (a peer that never connects)
//   exit-early K  node K exits without finalize (its connections close: a lost node)
//   exchange      every node sends to every node and answers a call (a clean run)
//   barriers S    every node says "node K up", then the job runs barriers for S seconds
//                 (node 0's clock decides) and ends cleanly; the hosts test cuts links and
//                 kills hosts meanwhile
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <squall/squall.hpp>

#include "common/futex.hpp"
#include "transport/tcp/handshake.hpp"
#include "transport/tcp/socket_io.hpp"

namespace am = squall::am;
namespace tcp = squall::tcp;

namespace {

int echo(am::token&, int x) { return x + 1; }
int hellos = 0;
void on_hello(am::token&, int) { ++hellos; }

int connect_to(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const sockaddr_in sa = tcp::to_sockaddr({0x7f000001, port});
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
    std::perror("tcp_scenarios: connect");
    std::exit(3);
  }
  return fd;
}

void be_strangers(std::uint16_t port) {
  ::close(connect_to(port));  // connects and says nothing
  int fd = connect_to(port);
  const char garbage[] = "GET / HTTP/1.0\r\n\r\nnot a squall node at all";
  [[maybe_unused]] auto w = ::send(fd, garbage, sizeof garbage, MSG_NOSIGNAL);
  ::close(fd);
  fd = connect_to(port);
  tcp::job_secret wrong{};
  std::string why;
  tcp::configure_connection(fd);
  const bool ok =
      tcp::connect_handshake(fd, 0, 1, wrong, squall::now_ns() + 3'000'000'000, why) == tcp::handshake_result::done;
  std::printf("stranger handshake with a wrong secret: %s (%s)\n", ok ? "accepted" : "refused", why.c_str());
  ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const int arg = argc > 2 ? std::atoi(argv[2]) : 1;
  if (mode == "late-init" && std::string(std::getenv("SQUALL_NODE")) == "1") std::this_thread::sleep_for(std::chrono::seconds(arg));
  squall::runtime rt(&argc, &argv);
  const int me = squall::node(), n = squall::nodes();
  if (mode == "strangers") {
    const char* base = std::getenv("SQUALL_TCP_PORT");
    if (base == nullptr) {
      std::fprintf(stderr, "tcp_scenarios strangers: set SQUALL_TCP_PORT\n");
      return 2;
    }
    if (me == 0) be_strangers(static_cast<std::uint16_t>(std::atoi(base) + 1));
    if (me == 1) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (squall::stats::take().get("tcp.connections_refused") < 3 && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      std::printf("node 1 refused %llu connections\n",
                  static_cast<unsigned long long>(squall::stats::take().get("tcp.connections_refused")));
    }
    squall::barrier();
    std::printf("node %d: after the strangers, call returned %d\n", me, am::call<echo>((me + 1) % n, me));
  } else if (mode == "late-init" || mode == "exchange") {
    for (int d = 0; d < n; ++d) am::send<on_hello>(d, me);
    squall::fence();
    if (hellos != n) std::printf("node %d: %d hellos of %d\n", me, hellos, n);
    std::printf("node %d: exchange done, call returned %d\n", me, am::call<echo>((me + 1) % n, me));
  } else if (mode == "barriers") {
    squall::barrier();
    std::printf("node %d up\n", me);
    std::fflush(stdout);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(arg);
    for (int done = 0; done == 0;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      done = me == 0 && std::chrono::steady_clock::now() >= until;
      squall::broadcast(done);
    }
    std::printf("node %d: barriers done\n", me);
  } else if (mode == "exit-early") {
    if (me == arg) std::exit(0);
    for (;;) squall::barrier();
  } else {
    std::fprintf(stderr, "tcp_scenarios: unknown mode '%s'\n", mode.c_str());
    return 2;
  }
  return 0;
}
