// SPDX-License-Identifier: BSD-3-Clause
// tcp_pingpong_am: the Squall half of tcp_pingpong, run as `squallrun -n 2 -- tcp_pingpong_am`
// with SQUALL_TRANSPORT=tcp (bench/tcp/tcp_pingpong does). Node 0 measures, node 1 only runs
// handlers:
//   am_rtt_us  round trip of an active message with an 8-byte argument whose handler replies;
//   bw_gbs     am::bulk_send of --bulk-bytes, each transfer waited to remote completion.
// It also reports which transport carried the bytes (transport_used; see tcp_bytes below).
#include <linux/tcp.h>  // struct tcp_info with its byte counters (glibc's copy lacks them)
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include <squall/squall.hpp>

#include "pingpong.hpp"

namespace {

namespace am = squall::am;
namespace tp = squall::bench::tcp_pingpong;

constexpr const char* usage = "usage: squallrun -n 2 -- tcp_pingpong_am [options]\n";

std::uint64_t pongs = 0;
bool stop = false;
std::size_t bulk_bytes = 0;  // what every transfer must carry
std::uint64_t transfers = 0, bad_transfers = 0;

void on_pong(am::token&, std::uint64_t) { ++pongs; }
void on_ping(am::token& t, std::uint64_t i) { t.reply<on_pong>(i); }
void on_stop(am::token&) { stop = true; }
void on_bulk(am::token&, am::payload p) {
  if (p.size() != bulk_bytes || !tp::marked(p.data(), p.size(), transfers)) ++bad_transfers;
  ++transfers;
}

void round_trips(int count) {
  for (int i = 0; i < count; ++i) {
    const std::uint64_t want = pongs + 1;
    am::send<on_ping>(1, want);
    am::wait_until([want] { return pongs == want; });
  }
}

// Bytes this process has moved through TCP sockets (sent and acknowledged, plus received),
// summed over its open descriptors: whether the runtime really talks TCP, whatever
// SQUALL_TRANSPORT says. Descriptors that are not TCP sockets fail getsockopt.
std::uint64_t tcp_bytes() {
  std::uint64_t sum = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    const int fd = std::atoi(entry.path().filename().c_str());
    tcp_info info{};
    socklen_t len = sizeof info;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0 &&
        len >= offsetof(tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received) {
      sum += info.tcpi_bytes_acked + info.tcpi_bytes_received;
    }
  }
  return sum;
}

// Node 0's side: both exchanges timed, then node 1 is told to stop.
tp::output measure(const tp::plan& p) {
  const double rtt = tp::median_seconds_per_op(p.trials, p.iters, round_trips);
  std::vector<std::byte> buf(p.bulk_bytes);
  std::uint64_t k = 0;
  const double per_transfer = tp::median_seconds_per_op(p.trials, p.bulk_iters, [&](int count) {
    for (int i = 0; i < count; ++i) {
      tp::mark(buf.data(), buf.size(), k++);
      am::bulk_send<on_bulk>(1, am::payload(buf.data(), buf.size())).wait_remote();
    }
  });
  const std::uint64_t tcp = tcp_bytes();
  am::send<on_stop>(1);

  const char* requested = std::getenv("SQUALL_TRANSPORT");
  // Node 0 sent total_transfers() * bulk_bytes: over TCP about that many went through its
  // sockets (the last ones may not be acknowledged yet, hence the half); otherwise the
  // runtime used its only other transport, shared memory.
  const bool over_tcp = tcp >= p.total_transfers() * p.bulk_bytes / 2;
  tp::output out;
  out.add("am_rtt_us", tp::rtt_us(rtt));
  out.add("bw_gbs", tp::gb_per_s(p, per_transfer));
  out.add("transport", requested && *requested ? requested : "unset");
  out.add("transport_used", over_tcp ? "tcp" : "shm");
  out.add("tcp_bytes", static_cast<double>(tcp));
  return out;
}

int run(const tp::plan& p) {
  bulk_bytes = p.bulk_bytes;
  squall::barrier();  // set everywhere before the first message
  tp::output out;
  if (squall::node() == 0) out = measure(p);
  else am::wait_until([] { return stop; });

  // Node 1's verdict on the transfers it received.
  const std::uint64_t received = squall::allreduce(transfers), bad = squall::allreduce(bad_transfers);
  const bool ok = bad == 0 && received == p.total_transfers();
  if (squall::node() != 0) return ok ? 0 : 1;
  if (!ok) {
    std::fprintf(stderr, "tcp_pingpong_am: node 1 received %llu transfers, %llu of them wrong (expected %llu)\n",
                 static_cast<unsigned long long>(received), static_cast<unsigned long long>(bad),
                 static_cast<unsigned long long>(p.total_transfers()));
    return 1;
  }
  out.print("tcp_pingpong_am: node 0 <-> node 1, median over trials", p.json);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  if (squall::nodes() != 2) {
    if (squall::node() == 0) std::fprintf(stderr, "tcp_pingpong_am needs 2 nodes\n%s", usage);
    return 1;
  }
  try {
    return run(tp::parse_plan(argc, argv));
  } catch (const std::invalid_argument& e) {
    // Every node parses the same arguments, so every node stops here.
    if (squall::node() == 0) std::fprintf(stderr, "tcp_pingpong_am: %s\n%s%s", e.what(), usage, tp::plan_usage);
    return 2;
  }
}
