// SPDX-License-Identifier: BSD-3-Clause
// channel_set: capacities exchanged once, rounds, credits and the checks of every call.
#include <squall/channel.hpp>

#include <squall/am.hpp>
#include <squall/collectives.hpp>
#include <squall/error.hpp>
#include <squall/runtime.hpp>
#include <squall/stats.hpp>

#include <algorithm>
#include <cstring>
#include <exception>
#include <vector>

#include "channel/state.hpp"
#include "collectives/inbox.hpp"
#include "common/log.hpp"

namespace squall {
namespace {

stats::counter messages_sent("channel.messages_sent");
stats::counter bytes_sent("channel.bytes_sent");
stats::counter rounds_done("channel.rounds");
stats::counter waits("channel.waits");

using detail::channel_state;

unsigned long long ull(std::uint64_t v) { return static_cast<unsigned long long>(v); }

std::size_t aligned(std::size_t bytes) {
  constexpr std::size_t a = alignof(std::max_align_t);
  return (bytes + a - 1) / a * a;
}

void check_peer(const channel_state& s, int peer, const char* what) {
  if (peer < 0 || peer >= s.n) throw usage_error(format("channel %s: no node %d (the job has %d)", what, peer, s.n));
}

// Checks that this node may still send to peer in this round.
void check_target(const channel_state& s, int peer, const char* what) {
  check_peer(s, peer, what);
  if (s.out[peer].capacity == 0) {
    throw usage_error(format("channel %s to node %d: node %d receives nothing from this node (it declared "
                             "capacity 0 for it)", what, peer, peer));
  }
  if (s.out[peer].ended) {
    throw usage_error(format("channel %s to node %d: this node already ended round %llu towards node %d",
                             what, peer, ull(s.round.load()), peer));
  }
}

// Begins this node's round if it has not: the previous round's data is no longer read, so
// every peer that writes here gets its credit for this round.
// A channel's messages (data, credits) are taken in by their receivers' own waits
// (wait_round, await_credit): sent quietly, they do not wake a receiver that computes.
void open_round(channel_state& s) {
  if (s.open) return;
  const am::quiet_sends quiet;
  s.open = true;
  const std::uint64_t r = s.round.load();
  if (r == 0) return;  // the buffers start free
  for (int p = 0; p < s.n; ++p) s.in[p].extent = 0;  // no peer holds a credit to write now
  bool sent = false;
  for (int p = 0; p < s.n; ++p) {
    if (p == s.me || s.in[p].capacity == 0) continue;
    detail::send_channel_credit(s, p);
    sent = true;
  }
  if (sent) am::flush();
}

// Under the node lock, while this node waits for `peer` in round r: a peer that went on to a
// collective instead is named, once (coll::peer_gone_on). The wait goes on.
void say_if_gone_on(const channel_state& s, int peer, std::uint64_t r, const char* what) {
  const auto later = coll::peer_gone_on(peer);
  if (!later) return;
  warn("this node waits for node %d's %s of round %llu of channel set #%u, but node %d has gone on to %s "
       "(collective #%llu), which this node has not begun: if node %d skipped the round, the wait will never end",
       peer, what, ull(r), s.id, peer, later->name, ull(later->seq), peer);
}

void await_credit(const channel_state& s, int peer) {
  const std::uint64_t r = s.round.load();
  const auto& granted = s.out[peer].granted;
  if (granted.load(std::memory_order_acquire) >= r) return;
  am::wait_until([&] {
    if (granted.load(std::memory_order_acquire) >= r) return true;
    say_if_gone_on(s, peer, r, "credit");
    return false;
  });
}

// Data (possibly none) to peer, ending the round towards it when `last`.
void transmit(channel_state& s, int peer, std::size_t offset, am::payload data, bool last) {
  open_round(s);
  if (peer == s.me) {
    detail::channel_in& in = s.in[peer];
    if (!data.empty()) std::memcpy(in.buffer + offset, data.data(), data.size());
    in.extent = std::max(in.extent, offset + data.size());
    if (last) in.ended_through.store(s.round.load() + 1, std::memory_order_release);
  } else {
    await_credit(s, peer);
    const am::quiet_sends quiet;
    detail::send_channel_data(s, peer, offset, data, last);
    if (last) am::flush(peer);  // the receiver may be waiting for this round's end now
  }
  if (last) s.out[peer].ended = true;
}

void send_checked(channel_state& s, int peer, std::size_t offset, am::payload data, bool last,
                  const char* what) {
  check_target(s, peer, what);
  const std::size_t cap = s.out[peer].capacity;
  if (offset > cap || data.size() > cap - offset) {
    throw usage_error(format("channel %s to node %d: %zu bytes at offset %zu exceed the %zu bytes node %d "
                             "receives from this node per round", what, peer, data.size(), offset, cap, peer));
  }
  transmit(s, peer, offset, data, last);
  messages_sent.add();
  bytes_sent.add(data.size());
}

}  // namespace

channel_set::channel_set(std::span<const std::size_t> capacity) : state_(std::make_unique<channel_state>()) {
  if (!initialized()) throw usage_error("channel_set: the runtime is not running (call squall::init first)");
  channel_state& s = *state_;
  s.me = node();
  s.n = nodes();
  if (capacity.size() != static_cast<std::size_t>(s.n)) {
    throw usage_error(format("channel_set: %zu capacities given, expected one per node (%d)", capacity.size(), s.n));
  }
  s.in = std::make_unique<detail::channel_in[]>(static_cast<std::size_t>(s.n));
  s.out = std::make_unique<detail::channel_out[]>(static_cast<std::size_t>(s.n));
  std::size_t total = 0;
  for (const std::size_t c : capacity) total += aligned(c);
  s.storage.reset(new std::byte[std::max<std::size_t>(total, 1)]);
  std::size_t at = 0;
  for (int p = 0; p < s.n; ++p) {
    s.in[p].buffer = s.storage.get() + at;
    s.in[p].capacity = capacity[p];
    at += aligned(capacity[p]);
  }
  // Registered before the exchange: a peer that has the capacities may send at once.
  am::run_locked([](void* c) {
    auto* st = static_cast<channel_state*>(c);
    st->id = detail::register_channel_set(st);
  }, &s);
  // Row q of the matrix: what node q receives from each node; this node's column is its
  // capacities to the others.
  const std::size_t n = static_cast<std::size_t>(s.n);
  std::vector<std::uint64_t> matrix(n * n, 0);
  for (std::size_t p = 0; p < n; ++p) matrix[static_cast<std::size_t>(s.me) * n + p] = capacity[p];
  allreduce(std::span<const std::uint64_t>(matrix), std::span<std::uint64_t>(matrix));
  for (std::size_t p = 0; p < n; ++p) s.out[p].capacity = matrix[p * n + static_cast<std::size_t>(s.me)];
}

channel_set::~channel_set() noexcept(false) {
  channel_state& s = *state_;
  auto forget = [](void* c) { detail::unregister_channel_set(static_cast<channel_state*>(c)->id); };
  if (initialized()) {
    am::run_locked(forget, &s);
  } else {
    forget(&s);  // after finalize no handler runs
  }
  if (s.open && std::uncaught_exceptions() == 0) {
    throw usage_error(format("channel_set #%u destroyed while round %llu is open on this node (finish it with "
                             "wait_round first)", s.id, ull(s.round.load())));
  }
}

std::size_t channel_set::capacity_from(int peer) const {
  check_peer(*state_, peer, "capacity_from");
  return state_->in[peer].capacity;
}

std::size_t channel_set::capacity_to(int peer) const {
  check_peer(*state_, peer, "capacity_to");
  return state_->out[peer].capacity;
}

std::uint64_t channel_set::round() const { return state_->round.load(); }

void channel_set::send(int peer, std::size_t offset, std::span<const std::byte> data) {
  send_checked(*state_, peer, offset, data, false, "send");
}

void channel_set::send_last(int peer, std::size_t offset, std::span<const std::byte> data) {
  send_checked(*state_, peer, offset, data, true, "send_last");
}

void channel_set::end_round(int peer) {
  check_target(*state_, peer, "end_round");
  transmit(*state_, peer, 0, {}, true);
}

void channel_set::end_round() {
  channel_state& s = *state_;
  open_round(s);
  for (int p = 0; p < s.n; ++p) {
    if (s.out[p].capacity != 0 && !s.out[p].ended) transmit(s, p, 0, {}, true);
  }
}

void channel_set::begin_round() { open_round(*state_); }

void channel_set::wait_round() {
  channel_state& s = *state_;
  open_round(s);
  const std::uint64_t r = s.round.load();
  for (int p = 0; p < s.n; ++p) {
    if (s.out[p].capacity != 0 && !s.out[p].ended) {
      throw usage_error(format("channel wait_round: this node has not ended round %llu towards node %d, which "
                               "expects an end of round from it every round (end_round(%d) or send_last first)",
                               ull(r), p, p));
    }
  }
  auto first_not_ended = [&s, r] {
    for (int p = 0; p < s.n; ++p) {
      if (s.in[p].capacity != 0 && s.in[p].ended_through.load(std::memory_order_acquire) <= r) return p;
    }
    return -1;
  };
  if (first_not_ended() >= 0) {
    waits.add();
    am::wait_until([&] {
      const int p = first_not_ended();
      if (p >= 0) say_if_gone_on(s, p, r, "end");
      return p < 0;
    });
  }
  for (int p = 0; p < s.n; ++p) s.out[p].ended = false;
  s.round.store(r + 1);  // no data of round r + 1 arrives before this node's credit for it
  s.open = false;
  rounds_done.add();
}

std::span<const std::byte> channel_set::received(int peer) const {
  const channel_state& s = *state_;
  check_peer(s, peer, "received");
  if (s.open) {
    throw usage_error(format("channel received: round %llu is open on this node; a round's data is read after "
                             "its wait_round and before the next round's first send", ull(s.round.load())));
  }
  return {s.in[peer].buffer, s.in[peer].extent};
}

void channel_set::check_multiple(int peer, std::size_t bytes, std::size_t elem) const {
  if (bytes % elem != 0) {
    throw usage_error(format("channel received_as: node %d sent %zu bytes, not a whole number of %zu-byte "
                             "elements", peer, bytes, elem));
  }
}

}  // namespace squall
