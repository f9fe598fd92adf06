// SPDX-License-Identifier: BSD-3-Clause
#include "transport/tcp/refusals.hpp"

#include <unistd.h>

#include <cstdint>
#include <mutex>

#include "common/futex.hpp"
#include "common/log.hpp"
#include "stats/counters.hpp"
#include "transport/tcp/socket_io.hpp"

namespace squall::tcp {
namespace {

const int refused = stats::counter_slot("tcp.connections_refused");
constexpr std::uint64_t named_in_full = 5;
constexpr std::int64_t summary_every_ns = 5'000'000'000;

struct refusal_log {
  std::mutex mu;
  std::uint64_t total = 0, unreported = 0;
  std::int64_t last_summary = 0;
  std::string last;  // "from A: why" of the latest unreported refusal
};
refusal_log& the_log() {
  static refusal_log log;
  return log;
}

void summarise(refusal_log& log) {  // with log.mu held
  warn("refused %llu more TCP connection(s) (%llu in all), the last %s", static_cast<unsigned long long>(log.unreported),
       static_cast<unsigned long long>(log.total), log.last.c_str());
  log.unreported = 0;
  log.last_summary = now_ns();
}

}  // namespace

void refuse_connection(int fd, const endpoint& peer, const std::string& why) {
  const std::string from = to_string(peer);
  ::close(fd);
  stats::counter_at(refused).fetch_add(1, std::memory_order_relaxed);
  refusal_log& log = the_log();
  std::lock_guard g(log.mu);
  if (++log.total <= named_in_full) {
    warn("refused a TCP connection from %s: %s%s", from.c_str(), why.c_str(),
         log.total == named_in_full ? " (further refusals are summarised)" : "");
    return;
  }
  ++log.unreported;
  log.last = "from " + from + ": " + why;
  if (now_ns() - log.last_summary >= summary_every_ns) summarise(log);
}

void report_refusals() {
  refusal_log& log = the_log();
  std::lock_guard g(log.mu);
  if (log.unreported != 0) summarise(log);
}

}  // namespace squall::tcp
