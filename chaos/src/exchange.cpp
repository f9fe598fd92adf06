// SPDX-License-Identifier: BSD-3-Clause
#include <squall/chaos/exchange.hpp>
#include <squall/chaos/types.hpp>

#include <squall/am.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>
#include <squall/stats.hpp>

#include <cstdint>
#include <map>
#include <string>

#include "call_order.hpp"
#include "counters.hpp"

namespace squall::chaos {
namespace {

// What has arrived for each exchange (keyed by its executor call number, call_order.hpp:
// a fast node's next exchange may deliver before this one ends). Touched only under the
// node lock: by the handler, and by the wait predicates.
struct arrivals {
  std::vector<std::vector<std::byte>> from;  // by source node
  int count = 0;
};
std::map<std::uint64_t, arrivals>& inbox() {
  static auto* box = new std::map<std::uint64_t, arrivals>;  // never destroyed: handlers may run at exit
  return *box;
}

void on_exchange(am::token& t, std::uint64_t seq, am::payload bytes) {
  detail::check_arrival(t.source(), seq, {detail::call_kind::exchange, 0});
  arrivals& a = inbox()[seq];
  if (a.from.empty()) a.from.resize(static_cast<std::size_t>(squall::nodes()));
  a.from[static_cast<std::size_t>(t.source())].assign(bytes.begin(), bytes.end());
  ++a.count;
}

}  // namespace

int exchange_nodes() { return squall::nodes(); }

struct exchange_handle::state {
  std::uint64_t seq = 0;
  int want = 0;                                 // messages to receive
  std::vector<std::vector<std::byte>> outgoing;  // kept: bulk transfers stream from them
  std::vector<am::bulk_handle> large;
};

exchange_handle::exchange_handle() = default;
exchange_handle::exchange_handle(std::unique_ptr<state> s) : s_(std::move(s)) {}
exchange_handle::exchange_handle(exchange_handle&& o) noexcept : s_(std::move(o.s_)), moved_from_(o.moved_from_) {
  o.moved_from_ = true;
}
exchange_handle& exchange_handle::operator=(exchange_handle&& o) noexcept {
  if (this != &o) {
    if (s_) end();
    s_ = std::move(o.s_);
    moved_from_ = o.moved_from_;
    o.moved_from_ = true;
  }
  return *this;
}
exchange_handle::~exchange_handle() {
  if (s_) end();
}

exchange_handle exchange_begin(std::vector<std::vector<std::byte>> outgoing) {
  return detail::exchange_begin_checked(std::move(outgoing), {}, "chaos::exchange");
}

exchange_handle detail::exchange_begin_checked(std::vector<std::vector<std::byte>> outgoing, const std::string& problem,
                                               const char* api) {
  const int n = squall::nodes(), me = squall::node();
  std::string mine = problem;
  if (mine.empty() && outgoing.size() != static_cast<std::size_t>(n)) {
    mine = "one outgoing buffer per node is needed (" + std::to_string(n) + "), got " + std::to_string(outgoing.size());
  }
  if (!mine.empty()) outgoing.assign(static_cast<std::size_t>(n), {});  // nothing is sent
  auto s = std::make_unique<exchange_handle::state>();
  s->seq = detail::begin_call({detail::call_kind::exchange, 0});
  s->outgoing = std::move(outgoing);
  // How many messages each node is to receive (self-copies are not messages), and, last,
  // how many nodes found their input bad: in one allreduce.
  std::vector<std::int64_t> expected(static_cast<std::size_t>(n) + 1, 0);
  for (int d = 0; d < n; ++d) expected[d] = d != me && !s->outgoing[d].empty();
  expected[static_cast<std::size_t>(n)] = mine.empty() ? 0 : 1;
  allreduce(std::span<const std::int64_t>(expected), std::span<std::int64_t>(expected));
  if (expected[static_cast<std::size_t>(n)] != 0) {  // every node: nothing was sent
    detail::end_call(s->seq);
    throw usage_error(std::string(api) + ": " + (mine.empty() ? "another node found its input invalid" : mine));
  }
  s->want = static_cast<int>(expected[me]);

  for (int i = 1; i < n; ++i) {
    const int d = (me + i) % n;  // staggered, so that not every node sends to node 0 first
    const auto& buf = s->outgoing[d];
    if (buf.empty()) continue;
    detail::count_message(buf.size());
    if (buf.size() <= am::max_payload()) {
      am::send<on_exchange>(d, s->seq, am::payload(buf));
    } else {
      s->large.push_back(am::bulk_send<on_exchange>(d, s->seq, am::payload(buf)));
    }
  }
  am::flush();
  return exchange_handle(std::move(s));
}

std::vector<std::vector<std::byte>> exchange_handle::end(const char* api) {
  if (moved_from_) detail::used_after_move(api);
  if (!s_) throw usage_error(std::string(api) + "::end: the exchange was already ended");
  const std::unique_ptr<state> s = std::move(s_);
  const int n = squall::nodes(), me = squall::node();
  std::vector<std::vector<std::byte>> incoming(static_cast<std::size_t>(n));
  detail::wait_for_call(
      s->seq,
      [&] {
        auto it = inbox().find(s->seq);
        const int have = it == inbox().end() ? 0 : it->second.count;
        if (have < s->want) return false;
        if (it != inbox().end()) {
          incoming = std::move(it->second.from);
          inbox().erase(it);
        }
        return true;
      },
      [&] {  // who sends here is not known, only how many: every node not heard from
        std::vector<int> silent;
        auto it = inbox().find(s->seq);
        for (int p = 0; p < n; ++p) {
          if (p != me && (it == inbox().end() || it->second.from[static_cast<std::size_t>(p)].empty())) silent.push_back(p);
        }
        return silent;
      });
  detail::end_call(s->seq);
  incoming.resize(static_cast<std::size_t>(n));
  incoming[me] = std::move(s->outgoing[me]);
  for (auto& h : s->large) h.wait_local();
  return incoming;
}

std::vector<std::vector<std::byte>> exchange(std::vector<std::vector<std::byte>> outgoing) {
  return exchange_begin(std::move(outgoing)).end();
}

}  // namespace squall::chaos
