#include <squall/chaos/exchange.hpp>

#include <squall/am.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>
#include <squall/stats.hpp>

#include <cstdint>
#include <map>

#include "counters.hpp"

namespace squall::chaos {
namespace {

// What has arrived for each exchange (keyed by its sequence number: a fast node's next
// exchange may deliver before this one ends). Touched only under the node lock: by the
// handler, and by the wait predicate that takes a finished exchange's messages out.
struct arrivals {
  std::vector<std::vector<std::byte>> from;  // by source node
  int count = 0;
};
std::map<std::uint64_t, arrivals>& inbox() {
  static auto* box = new std::map<std::uint64_t, arrivals>;  // never destroyed: handlers may run at exit
  return *box;
}
std::uint64_t exchanges_begun = 0;

void on_exchange(am::token& t, std::uint64_t seq, am::payload bytes) {
  arrivals& a = inbox()[seq];
  if (a.from.empty()) a.from.resize(static_cast<std::size_t>(squall::nodes()));
  a.from[static_cast<std::size_t>(t.source())].assign(bytes.begin(), bytes.end());
  ++a.count;
}

}  // namespace

int exchange_nodes() { return squall::nodes(); }

std::vector<std::vector<std::byte>> exchange(std::vector<std::vector<std::byte>> outgoing) {
  const int n = squall::nodes(), me = squall::node();
  if (outgoing.size() != static_cast<std::size_t>(n)) {
    throw usage_error("chaos::exchange: one outgoing buffer per node is needed (" + std::to_string(n) +
                      "), got " + std::to_string(outgoing.size()));
  }
  const std::uint64_t seq = exchanges_begun++;
  // How many messages each node is to receive (self-copies are not messages).
  std::vector<std::int64_t> expected(static_cast<std::size_t>(n), 0);
  for (int d = 0; d < n; ++d) expected[d] = d != me && !outgoing[d].empty();
  allreduce(std::span<const std::int64_t>(expected), std::span<std::int64_t>(expected));

  std::vector<am::bulk_handle> large;
  for (int i = 1; i < n; ++i) {
    const int d = (me + i) % n;  // staggered, so that not every node sends to node 0 first
    const auto& buf = outgoing[d];
    if (buf.empty()) continue;
    detail::count_message(buf.size());
    if (buf.size() <= am::max_payload()) {
      am::send<on_exchange>(d, seq, am::payload(buf));
    } else {
      large.push_back(am::bulk_send<on_exchange>(d, seq, am::payload(buf)));
    }
  }
  am::flush();

  std::vector<std::vector<std::byte>> incoming(static_cast<std::size_t>(n));
  const auto want = static_cast<int>(expected[me]);
  am::wait_until([&] {
    auto it = inbox().find(seq);
    const int have = it == inbox().end() ? 0 : it->second.count;
    if (have < want) return false;
    if (it != inbox().end()) {
      incoming = std::move(it->second.from);
      inbox().erase(it);
    }
    return true;
  });
  incoming.resize(static_cast<std::size_t>(n));
  incoming[me] = std::move(outgoing[me]);
  for (auto& h : large) h.wait_local();
  return incoming;
}

}  // namespace squall::chaos
