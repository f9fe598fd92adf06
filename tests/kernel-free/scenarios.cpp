// SPDX-License-Identifier: BSD-3-Clause
// Programs that misbehave on purpose, run by launcher_test under squallrun:
//   kill-node K       node K is killed by SIGKILL while the others wait in a barrier
//   exit-early K      node K exits (status 0) without calling finalize
//   channel-lost K    node K is killed in a round of a channel set the others wait in
//   channel-skip K    node K skips round 2 of a channel set for a barrier (a hang, said)
//   unregistered      node 0 sends a handler id that node 1 has not registered
//   mismatch          node 0 calls barrier while the others call broadcast
//   mismatch-split    node 0 calls barrier while the others begin an allreduce_sum
//   handler-waits     a handler calls am::call
//   stats             exchanges a few messages and finalizes (run with SQUALL_STATS=1)
//   show-pids         every node prints "node K pid P up" and then waits in barriers (the
//                     test kills a node, or the launcher)
//   stop-node K       node K stops itself (SIGSTOP) while the others wait in a barrier
//   compute K S       node K computes for S seconds without a Squall call, then the job ends
//   flood M           every node sends M MiB of payloads to every node (itself too), then
//                     fences: every page of every ring is written
//   exit-before-init K  node K exits (status 0) before squall::init; the others wait in it
//   kill-before-init K  node K is killed by SIGKILL before squall::init; the others wait in it
//   sleep-before-init K S  node K sleeps S seconds before squall::init; then the job ends
//   ignore-signals    every node ignores SIGINT and SIGTERM, prints "node K pid P up" and
//                     waits in barriers
//   different-roots   every node calls reduce with itself as the root, then finalizes
//   broadcast-roots   every node calls broadcast with itself as the root, then finalizes
//   broadcast-root-1-on-last   the last node broadcasts from node 1, the others from node 0
//   count-interrupts  every node prints "node K pid P up", counts the SIGINTs it has until 1 s
//                     after the first, prints "node K had N interrupt(s)" and exits with
//                     status 0, never calling squall::init
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <squall/squall.h>
#include <squall/squall.hpp>

namespace am = squall::am;

namespace {

void only_on_node_0(int, const void*, size_t, const void*, size_t) {}
int on_value(am::token&, int x) { return x; }
void on_waits(am::token& t) { am::call<on_value>(t.source(), 1); }
void on_hello(am::token&, int) {}
void on_bytes(am::token&, am::payload) {}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const int victim = argc > 2 ? std::atoi(argv[2]) : 1;
  const char* node_env = std::getenv("SQUALL_NODE");
  std::uint32_t stray = 0;
  if (mode == "unregistered" && node_env && std::strcmp(node_env, "0") == 0) {
    stray = squall_am_register("only_on_node_0", only_on_node_0);
  }
  // Before squall::init, so by the launcher's node number (squallrun's, or a PMIx rank).
  const char* rank_env = node_env != nullptr ? node_env : std::getenv("PMIX_RANK");
  const int node_number = rank_env != nullptr ? std::atoi(rank_env) : 0;
  if (mode == "exit-before-init" && node_number == victim) return 0;
  if (mode == "kill-before-init" && node_number == victim) raise(SIGKILL);
  if (mode == "sleep-before-init" && node_number == victim) sleep(static_cast<unsigned>(argc > 3 ? std::atoi(argv[3]) : 5));
  if (mode == "count-interrupts") {
    // Read from a signalfd rather than counted by a handler, which ThreadSanitizer's runtime
    // may fail to call for a signal that comes between two of its interceptors.
    sigset_t interrupt;
    sigemptyset(&interrupt);
    sigaddset(&interrupt, SIGINT);
    sigprocmask(SIG_BLOCK, &interrupt, nullptr);
    const int signal_fd = signalfd(-1, &interrupt, 0);
    std::printf("node %d pid %d up\n", node_number, static_cast<int>(getpid()));
    std::fflush(stdout);
    signalfd_siginfo info;
    int interrupts = read(signal_fd, &info, sizeof info) == sizeof info ? 1 : 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    for (auto now = until - std::chrono::seconds(1); now < until; now = std::chrono::steady_clock::now()) {
      pollfd ready{signal_fd, POLLIN, 0};
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count();
      if (poll(&ready, 1, static_cast<int>(ms) + 1) > 0 && read(signal_fd, &info, sizeof info) == sizeof info) {
        ++interrupts;
      }
    }
    std::printf("node %d had %d interrupt(s)\n", node_number, interrupts);
    return 0;
  }
  if (mode == "ignore-signals") {
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
  }
  squall::runtime rt(&argc, &argv);
  const int me = squall::node();
  if (mode == "kill-node") {
    if (me == victim) raise(SIGKILL);
    for (;;) squall::barrier();
  } else if (mode == "channel-lost") {
    squall::channel_set ch(std::vector<std::size_t>(static_cast<std::size_t>(squall::nodes()), 8));
    for (;;) {
      if (me == victim && ch.round() == 2) raise(SIGKILL);
      ch.end_round();
      ch.wait_round();
    }
  } else if (mode == "channel-skip") {
    squall::channel_set ch(std::vector<std::size_t>(static_cast<std::size_t>(squall::nodes()), 8));
    for (;;) {
      if (me == victim && ch.round() == 2) squall::barrier();
      ch.end_round();
      ch.wait_round();
    }
  } else if (mode == "exit-early") {
    if (me == victim) std::exit(0);
    for (;;) squall::barrier();
  } else if (mode == "unregistered") {
    if (me == 0) {
      squall_am_send(1, stray, nullptr, 0, nullptr, 0);
      am::flush();
    }
    for (;;) squall::barrier();
  } else if (mode == "mismatch") {
    int x = 0;
    if (me == 0) {
      squall::barrier();
    } else {
      squall::broadcast(x, 1);
    }
    for (;;) squall::barrier();
  } else if (mode == "mismatch-split") {
    if (me == 0) {
      squall::barrier();
    } else {
      const std::uint64_t one = 1;
      squall::allreduce_sum sum{std::span<const std::uint64_t>(&one, 1)};
      while (!sum.progress()) am::wait_until([&] { return sum.ready(); });
    }
    for (;;) squall::barrier();
  } else if (mode == "handler-waits") {
    if (me == 0) am::send<on_waits>(1);
    for (;;) squall::barrier();
  } else if (mode == "different-roots") {
    const std::int64_t in = me + 1;
    std::int64_t out = 0;
    squall::reduce(std::span<const std::int64_t>(&in, 1), std::span<std::int64_t>(&out, 1), squall::op::sum{}, me);
  } else if (mode == "broadcast-roots" || mode == "broadcast-root-1-on-last") {
    const int root = mode == "broadcast-roots" ? me : (me == squall::nodes() - 1 ? 1 : 0);
    int value = me;
    squall::broadcast(std::span<int>(&value, 1), root);
    std::printf("node %d has %d\n", me, value);
  } else if (mode == "exit-before-init" || mode == "kill-before-init" || mode == "sleep-before-init") {
    squall::barrier();
  } else if (mode == "show-pids" || mode == "ignore-signals") {
    std::printf("node %d pid %d up\n", me, static_cast<int>(getpid()));
    std::fflush(stdout);
    for (;;) squall::barrier();
  } else if (mode == "stop-node") {
    if (me == victim) raise(SIGSTOP);
    for (;;) squall::barrier();
  } else if (mode == "compute") {
    const int seconds = argc > 3 ? std::atoi(argv[3]) : 5;
    if (me == victim) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
      volatile unsigned long sum = 0;
      while (std::chrono::steady_clock::now() < until) {
        for (int i = 0; i < 100000; ++i) sum = sum + static_cast<unsigned long>(i);
      }
    }
    squall::barrier();
    if (me == 0) std::printf("computed\n");
  } else if (mode == "flood") {
    constexpr std::size_t piece = 16 << 10;
    const std::size_t pieces = (static_cast<std::size_t>(victim) << 20) / piece;
    static const std::vector<std::byte> bytes(piece);
    for (std::size_t i = 0; i < pieces; ++i) {
      for (int d = 0; d < squall::nodes(); ++d) am::send<on_bytes>(d, am::payload(bytes));
    }
    squall::fence();
    if (me == 0) std::printf("flooded\n");
  } else if (mode == "stats") {
    for (int d = 0; d < squall::nodes(); ++d) am::send<on_hello>(d, me);
    squall::fence();
  } else {
    std::fprintf(stderr, "scenarios: unknown mode '%s'\n", mode.c_str());
    return 2;
  }
  return 0;
}
