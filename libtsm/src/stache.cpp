// SPDX-License-Identifier: BSD-3-Clause
#include "stache.hpp"

#include "env.hpp"
#include "fail.hpp"

#include <algorithm>
#include <cstring>

#include <squall/runtime.hpp>
#include <squall/stats.hpp>

namespace squall::tsm::detail {
namespace {

// Totals over every TSM segment of this node, for SQUALL_STATS.
stats::counter read_misses_total("tsm.read_misses");
stats::counter write_misses_total("tsm.write_misses");
stats::counter upgrades_total("tsm.upgrades");
stats::counter retries_total("tsm.retries");
stats::counter invalidations_received_total("tsm.invalidations_received");
stats::counter writebacks_total("tsm.writebacks");
stats::counter invalidations_sent_total("tsm.invalidations_sent");
stats::counter requests_served_total("tsm.requests_served");
stats::counter requests_deferred_total("tsm.requests_deferred");

void bump(std::uint64_t& local, stats::counter& total) {
  ++local;
  total.add();
}

// Messages name a block by its address, the same on every node.
std::uintptr_t address_of(segment s, block_index b) { return reinterpret_cast<std::uintptr_t>(s.address_of(b)); }

struct located {
  segment s;
  block_index b;
  stache* p;
};
located locate(std::uintptr_t block) {
  const segment s = memory::segment_of(reinterpret_cast<const void*>(block));
  return {s, s.block_of(reinterpret_cast<const void*>(block)), static_cast<stache*>(s.bound_protocol())};
}

void request_msg(am::token& t, std::uintptr_t block, bool write) {
  const auto [s, b, p] = locate(block);
  p->on_request(s, b, t.source(), write);
}
void invalidate_msg(am::token& t, std::uintptr_t block, bool keep_read_only) {
  const auto [s, b, p] = locate(block);
  p->on_invalidate(s, b, t.source(), keep_read_only);
}
// A block's bytes travel as fill messages of at most am::max_payload() bytes each and the
// last part in the message that completes the step (ack or grant), so that blocks of any
// size fit; messages between two nodes arrive in order, so the fills land first.
void fill(segment s, block_index b, std::size_t offset, am::payload bytes) {
  if (!bytes.empty()) std::memcpy(s.protocol_view(b).data() + offset, bytes.data(), bytes.size());
}
void fill_msg(am::token&, std::uintptr_t block, std::uint64_t offset, am::payload bytes) {
  const auto [s, b, p] = locate(block);
  fill(s, b, offset, bytes);
}
void ack_msg(am::token&, std::uintptr_t block, std::uint64_t offset, am::payload bytes) {
  const auto [s, b, p] = locate(block);
  fill(s, b, offset, bytes);
  p->on_ack(s, b);
}
void grant_msg(am::token&, std::uintptr_t block, bool write, std::uint64_t offset, am::payload bytes) {
  const auto [s, b, p] = locate(block);
  p->on_grant(s, b, write, offset, bytes);
}

// Sends the block's protocol-view bytes to `dest` (or none when `with_bytes` is false) and
// returns where the last part starts; that part goes with the final message.
struct last_part {
  std::uint64_t offset;
  am::payload bytes;
};
last_part send_fills(segment s, block_index b, int dest, bool with_bytes) {
  if (!with_bytes) return {0, am::payload{}};
  const std::span<const std::byte> all = s.protocol_view(b);
  const std::size_t chunk = am::max_payload();
  std::size_t at = 0;
  for (; all.size() - at > chunk; at += chunk) {
    am::send<fill_msg>(dest, address_of(s, b), std::uint64_t{at}, am::payload(all.subspan(at, chunk)));
  }
  return {at, am::payload(all.subspan(at))};
}

bool allows(tag t, bool write) { return write ? t == tag::read_write : t != tag::invalid; }

stats::counter invalidations_held_total("tsm.invalidations_held");

// This node's hold: the block granted last, and the invalidation that came for it while
// held, if any. Touched under the node lock only: by handlers, fault handlers (which run
// under it), deferred calls, and let_go.
struct hold_state {
  stache* protocol = nullptr;  // nullptr: nothing held
  segment s;
  block_index b = 0;
  std::uint64_t generation = 0;  // tells a stale deferred call from the current hold
  std::int64_t since = -1;       // when the fault handler returned (-1: not yet)
  bool invalidated = false;
  int home = -1;
  bool keep_read_only = false;
};
hold_state held;

std::int64_t hold_ns() {
  static const auto ns = static_cast<std::int64_t>(env_number("SQUALL_TSM_HOLD_US", 50, 0, 1'000'000, "microseconds") * 1000);
  return ns;
}

void release_hold_locked(void*) { stache::release_hold(); }
void release_if_current(void* generation) {
  if (held.protocol != nullptr && held.generation == reinterpret_cast<std::uintptr_t>(generation)) {
    stache::release_hold();
  }
}
// The hold ends hold_ns() after the fault handler returned. Only a held invalidation needs
// the deferred call (and the progress thread's wake-up): without one, nothing waits.
void end_hold_in_time() {
  am::call_at(held.since + hold_ns(), release_if_current, reinterpret_cast<void*>(static_cast<std::uintptr_t>(held.generation)));
}
void handler_returned() {
  if (held.protocol == nullptr) return;
  held.since = am::clock_ns();
  if (held.invalidated) end_hold_in_time();
}

}  // namespace

void stache::let_go() { am::run_locked(release_hold_locked, nullptr); }

void stache::release_hold() {
  stache* p = held.protocol;
  if (p == nullptr) return;
  held.protocol = nullptr;
  if (held.invalidated) {
    held.invalidated = false;
    p->answer_invalidation(held.s, held.b, held.home, held.keep_read_only);
  }
}

stache::stache(std::size_t blocks)
    : nodes_(squall::nodes()),
      words_((static_cast<std::size_t>(nodes_) + 63) / 64),
      dir_(blocks),
      sharers_(blocks * words_) {
  waiting_.reserve(static_cast<std::size_t>(nodes_));
}

std::size_t stache::state_bytes_per_block() {
  const auto words = (static_cast<std::size_t>(squall::nodes()) + 63) / 64;
  return sizeof(home_entry) + words * sizeof(std::uint64_t) + sizeof(tag);
}

bool stache::is_sharer(block_index b, int node) const {
  return (sharers_[b * words_ + static_cast<std::size_t>(node) / 64] >> (node % 64) & 1) != 0;
}

void stache::set_sharer(block_index b, int node, bool on) {
  std::uint64_t& w = sharers_[b * words_ + static_cast<std::size_t>(node) / 64];
  const std::uint64_t bit = std::uint64_t{1} << (node % 64);
  w = on ? (w | bit) : (w & ~bit);
}

// --- home side ---

void stache::on_request(segment s, block_index b, int from, bool write) {
  bump(counts_.requests_served, requests_served_total);
  if (dir_[b].requester >= 0) {  // busy: served when the transaction in progress ends
    if (waiting_.size() == waiting_.capacity()) {
      fail("node %d has more requests waiting than nodes (a node sent two at once)", squall::node());
    }
    waiting_.push_back({b, from, write});
    bump(counts_.requests_deferred, requests_deferred_total);
    return;
  }
  start(s, b, from, write);
}

void stache::start(segment s, block_index b, int from, bool write) {
  home_entry& d = dir_[b];
  d.requester = from;
  d.write = write;
  d.acks = 0;
  if (write) {
    for (int n = 0; n < nodes_; ++n) {
      if (n != from && is_sharer(b, n)) invalidate(s, b, n, false);
    }
  }
  if (d.owner >= 0 && d.owner != from) invalidate(s, b, d.owner, !write);
  if (d.acks == 0) grant(s, b);
}

void stache::invalidate(segment s, block_index b, int holder, bool keep_read_only) {
  bump(counts_.invalidations_sent, invalidations_sent_total);
  if (holder == squall::node()) {  // the home's own copy: no message, no answer to wait for
    lower(s, b, keep_read_only);
    return;
  }
  ++dir_[b].acks;
  am::send<invalidate_msg>(holder, address_of(s, b), keep_read_only);
}

void stache::on_ack(segment s, block_index b) {
  if (--dir_[b].acks == 0) grant(s, b);
}

void stache::grant(segment s, block_index b) {
  home_entry& d = dir_[b];
  const int to = d.requester;
  const int me = squall::node();
  bool send_bytes = to != me;  // the home's protocol view is the master copy
  if (d.write) {
    send_bytes = send_bytes && !is_sharer(b, to);  // an upgrade: its copy is current
    std::fill_n(sharers_.begin() + static_cast<std::ptrdiff_t>(b * words_), words_, 0);
    d.owner = to;
  } else {
    if (d.owner >= 0) set_sharer(b, d.owner, true);  // downgraded to ReadOnly
    d.owner = -1;
    set_sharer(b, to, true);
  }
  d.requester = -1;
  if (to == me) {
    on_grant(s, b, d.write, 0, am::payload{});  // the home's own fault: no message
  } else {
    const last_part last = send_fills(s, b, to, send_bytes);
    am::send<grant_msg>(to, address_of(s, b), d.write, last.offset, last.bytes);
  }
  // The oldest request that waited for this block goes next (after the grant: messages
  // to one node arrive in order, so an invalidation it causes cannot overtake the grant).
  const auto next = std::find_if(waiting_.begin(), waiting_.end(), [b](const waiting_request& w) { return w.block == b; });
  if (next != waiting_.end()) {
    const waiting_request w = *next;
    waiting_.erase(next);
    start(s, b, w.node, w.write);
  }
}

// --- cache side ---

bool stache::lower(segment s, block_index b, bool keep_read_only) {
  const bool owned = s.tag_of(b) == tag::read_write;
  // The tag first: once it is lowered, no store of this node can reach the block any more.
  s.set_tag(b, keep_read_only ? tag::read_only : tag::invalid);
  bump(counts_.invalidations_received, invalidations_received_total);
  if (owned) bump(counts_.writebacks, writebacks_total);
  return owned;
}

void stache::on_invalidate(segment s, block_index b, int home, bool keep_read_only) {
  if (held.protocol == this && held.s == s && held.b == b && !held.invalidated) {
    held.invalidated = true;  // answered when the hold ends
    held.home = home;
    held.keep_read_only = keep_read_only;
    invalidations_held_total.add();
    if (held.since >= 0) end_hold_in_time();
    return;
  }
  answer_invalidation(s, b, home, keep_read_only);
}

void stache::answer_invalidation(segment s, block_index b, int home, bool keep_read_only) {
  const bool owned = lower(s, b, keep_read_only);
  const last_part last = send_fills(s, b, home, owned);
  am::send<ack_msg>(home, address_of(s, b), last.offset, last.bytes);
}

void stache::on_grant(segment s, block_index b, bool write, std::size_t offset, am::payload bytes) {
  const tag t = write ? tag::read_write : tag::read_only;
  if (offset == 0 && bytes.size() == s.block_size()) {
    s.install(b, bytes, t);  // the whole block at once: the cheapest way in
  } else {
    fill(s, b, offset, bytes);  // the last part of a large block, or none
    s.set_tag(b, t);
  }
  answered_ = true;
  release_hold();  // (an earlier one, if its deferred call has not run yet)
  if (hold_ns() > 0) {
    held.protocol = this;
    held.s = s;
    held.b = b;
    held.since = -1;
    ++held.generation;
  }
}

void stache::acquire(segment s, block_index b, bool write) {
  // A new fault: the access the last grant was for has run (or is this one), so the block
  // held for it is let go first. (Fault handlers run under the node lock already.)
  release_hold();
  bool first = true;
  // Asks until the tag allows the access: a message handled at the end of the wait may
  // already have taken the granted block away again.
  for (tag t = s.tag_of(b); !allows(t, write); t = s.tag_of(b)) {
    if (!first) {
      bump(counts_.retries, retries_total);
    } else if (!write) {
      bump(counts_.read_misses, read_misses_total);
    } else if (t == tag::read_only) {
      bump(counts_.upgrades, upgrades_total);
    } else {
      bump(counts_.write_misses, write_misses_total);
    }
    first = false;
    answered_ = false;
    am::send<request_msg>(s.home(b), address_of(s, b), write);
    am::wait_until([this] { return answered_; });
  }
  // The access runs when this returns (or, on the fault-thread path, when the faulting
  // thread wakes): the hold ends a moment later unless another fault ends it first.
  if (!first && hold_ns() > 0) handler_returned();
}

}  // namespace squall::tsm::detail
