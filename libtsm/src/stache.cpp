// SPDX-License-Identifier: BSD-3-Clause
#include "stache.hpp"

#include <squall/settings.hpp>
#include <squall/tsm/hold.hpp>
#include "fail.hpp"
#include "protocol/binding.hpp"

#include <algorithm>

#include <squall/runtime.hpp>
#include <squall/stats.hpp>

namespace squall::tsm::detail {
namespace {

bool allows(tag t, bool write) { return write ? t == tag::read_write : t != tag::invalid; }

// The blocks of s bound to the same protocol as b (tsm::alloc_bound, tsm::bind): what the
// home may take ahead of a fault on b.
std::pair<block_index, block_index> range_of(segment s, block_index b) {
  const auto* bound = dynamic_cast<const binding*>(s.bound_protocol());
  return bound != nullptr ? bound->range_of(b) : std::pair<block_index, block_index>{0, s.blocks()};
}

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

std::size_t fetches = 0;  // tsm::fetch requests not granted yet (under the node lock)

std::size_t claim_window() {
  static const auto blocks = static_cast<std::size_t>(settings::number("SQUALL_TSM_FAULT_AROUND", 16, 0, 4096));
  return blocks;
}


void release_hold_locked(void*) { stache::release_hold(); }
void release_if_current(void* generation) {
  if (held.protocol != nullptr && held.generation == reinterpret_cast<std::uintptr_t>(generation)) {
    stache::release_hold();
  }
}
// The hold ends SQUALL_TSM_HOLD_US after the fault handler returned. Only a held invalidation needs
// the deferred call (and the progress thread's wake-up): without one, nothing waits.
void end_hold_in_time() {
  am::call_at(held.since + grant_hold::hold_ns(), release_if_current,
              reinterpret_cast<void*>(static_cast<std::uintptr_t>(held.generation)));
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

stache::stache() = default;

void stache::attach(block_index first, block_index end, std::size_t block_size) {
  // The settings read here, on the program's thread, so that a bad value stops it at once
  // rather than in a handler.
  grant_hold::hold_ns();
  claim_window();
  chunk_blocks_ = std::max<std::size_t>(1, alone_chunk_bytes() / block_size);
  one_sided_ = wants_home_words();
  const auto n = static_cast<std::size_t>(squall::nodes());
  dir_ = home_directory(first, end, squall::nodes(), n * (fetch_window + 1));
  first_ = first;
  fetching_.assign(end - first, 0);
  exclusive_.assign(end - first, 0);
  granting_exclusive_.assign(end - first, 0);
  written_.assign(end - first, adopted_ ? 1 : 0);
  reopen_marks_.assign(end - first, not_listed);
  to_reopen_.clear();
  to_reopen_.reserve(one_sided_ ? std::min<std::size_t>(end - first, reopen_capacity) : 0);
}

std::size_t stache::alone_chunk_bytes() {
  return squall::nodes() == 1 && claim_window() > 1 ? std::size_t{2} << 20 : 0;
}

std::size_t stache::state_bytes_per_block() {
  // + the fetch and exclusive flags, and the home's marks for an exclusive grant in progress,
  // for a block listed to reopen and for a block that may have been written
  return home_directory::bytes_per_block(squall::nodes()) + sizeof(tag) + 5 * sizeof(char);
}

counts stache::local_counts() const {
  return {.read_misses = read_misses_.value(),
          .write_misses = write_misses_.value(),
          .upgrades = upgrades_.value(),
          .retries = retries_.value(),
          .invalidations_received = invalidations_received_.value(),
          .writebacks = writebacks_.value(),
          .invalidations_sent = invalidations_sent_.value(),
          .requests_served = requests_served_.value(),
          .requests_deferred = requests_deferred_.value(),
          .fetched = fetched_.value(),
          .claimed_ahead = claimed_.value(),
          .exclusive_grants = exclusive_grants_.value(),
          .silent_upgrades = silent_upgrades_.value(),
          .one_sided_reads = one_sided_reads_.value(),
          .reopened = reopened_.value(),
          .zero_grants = zero_grants_.value()};
}

// --- home side ---

void stache::on_request(segment s, block_index b, int from, bool write) {
  requests_served_.add();
  if (dir_.busy(b)) {  // served when the transaction in progress ends
    dir_.defer(b, from, write);
    requests_deferred_.add();
    return;
  }
  start(s, b, from, write);
}

void stache::start(segment s, block_index b, int from, bool write) {
  dir_.start(b, from, write);
  // The start's own answer, given at its end: at the home's own fault a send below may wait
  // for room, handling what arrives meanwhile, and the answers to the invalidations sent so
  // far would otherwise grant the block (and end the transaction) before this has sent the
  // rest, and this would then grant it a second time, to nobody.
  dir_.expect_answer(b);
  close(s, b, write);  // before anything is decided: the readers registered so far count as sharers
  const int owner = dir_.owner(b);
  if (write) {
    dir_.for_each_sharer(b, [&](int n) {
      if (n != from) invalidate(s, b, n, false);
    });
  }
  if (owner >= 0 && owner != from) invalidate(s, b, owner, !write);
  // A read of a block nobody holds is granted exclusively (E, as in MESI): the reader may
  // then write it without asking again.
  granting_exclusive_[b - first_] = !write && dir_.held_by_nobody(b) ? 1 : 0;
  if (dir_.answer(b)) grant(s, b);
}

void stache::invalidate(segment s, block_index b, int holder, bool keep_read_only) {
  invalidations_sent_.add();
  if (holder == squall::node()) {  // the home's own copy: no message
    if (!holding(s, b)) {
      lower(s, b, keep_read_only);
      return;
    }
    dir_.expect_answer(b);  // answered in place when the hold ends, as another node's would be
    hold_invalidation(squall::node(), keep_read_only);
    return;
  }
  dir_.expect_answer(b);
  tsm::send<&stache::on_invalidate>(holder, s, b, keep_read_only);
}

void stache::on_ack(segment s, block_index b, int, block_part bytes) {
  bytes.store(s, b);
  if (dir_.answer(b)) grant(s, b);
}

void stache::grant(segment s, block_index b) {
  const home_directory::request r = dir_.current(b);
  const int me = squall::node();
  const bool exclusive = granting_exclusive_[b - first_] != 0;
  bool send_bytes = r.node != me;  // the home's protocol view is the master copy
  const bool never_written = written_[b - first_] == 0;
  if (r.write || exclusive) {
    written_[b - first_] = 1;
    if (r.write && r.node == me) note_written_after_readers(s, b);
    // Written by another node too: its readers may write it next, as under a lock (WATER-SPATIAL's
    // molecules): reopening it would cost the home upgrades and the readers misses.
    if (r.write && r.node != me) reopen_marks_[b - first_] = not_worth_it;
    send_bytes = send_bytes && !dir_.is_sharer(b, r.node);  // an upgrade: its copy is current
    dir_.clear_sharers(b);
    dir_.set_owner(b, r.node);
  } else {
    if (dir_.owner(b) >= 0) dir_.set_sharer(b, dir_.owner(b), true);  // downgraded to ReadOnly
    dir_.set_owner(b, -1);
    dir_.set_sharer(b, r.node, true);
  }
  // Nobody ever wrote it: the requester's copy holds the zeros it started with.
  if (send_bytes && never_written) {
    send_bytes = false;
    zero_grants_.add();
  }
  dir_.finish(b);
  open_if_clean(s, b);  // the bytes here are current: any ack's writeback is in
  if (exclusive) exclusive_grants_.add();
  if (r.node == me) {
    s.set_tag(b, r.write ? tag::read_write : tag::read_only);  // the home's own fault: no message
    exclusive_[b - first_] = exclusive ? 1 : 0;
    granted(s, b);
    claim_ahead(s, b);
  } else {
    // Busy again until the grant has left (the word, opened above, stays open for readers
    // of this host: the block's state and bytes are final). At the home's own fault (a hold
    // ending there) the send of a large block's parts may wait for room, handling what
    // arrives: a request for b handled meanwhile must wait in the queue. Started at once, its
    // invalidation would reach the requester ahead of the grant's last part, and the
    // requester would then install the grant after answering it, writable beside the next
    // owner.
    dir_.start(b, r.node, r.write);
    tsm::send_block<&stache::on_grant>(r.node, s, b, send_bytes, r.write, exclusive);
    dir_.finish(b);
  }
  // The oldest request that waited for this block goes next (after the grant: messages
  // to one node arrive in order, so an invalidation it causes cannot overtake the grant).
  // Unless the home's own grant above let go of an earlier hold, whose answer's send waited,
  // and a request handled meanwhile began a transaction: the queue then goes on when that
  // one's grant ends.
  if (dir_.busy(b)) return;
  if (const auto next = dir_.next_waiting(b)) start(s, b, next->node, next->write);
}

// Fault-around at the home, as the kernel maps a file's pages around a fault: when the home
// is granted its own block b while it holds b - 1 (a sweep), it takes the blocks after b that
// it is home to and nobody holds, up to claim_window() of them, ReadWrite at once. A sweep
// over fresh memory then faults once a window instead of once a block (RADIX's keys on one
// node: 8,199 faults of about 8 us). Taking them costs the others nothing: the home lowers
// its own copy in place when one asks.
void stache::claim_ahead(segment s, block_index b) {
  std::size_t window = claim_window();
  const int me = squall::node();
  if (window <= 1) return;
  if (chunk_blocks_ > 1) {
    claim_chunk(s, b);
    return;
  }
  if (b == first_ || s.tag_of(b - 1) == tag::invalid) return;
  // A sweep that faults where its last window ended takes twice as many next time, up to 64
  // windows, as the kernel's readahead grows: a home that fills a large array pays a fault
  // per 1024 blocks, not per 16 (PARMACS radix on one node of 2 workers: 1.25 of pthreads'
  // time with 16, 1.10 with 128). The last few sweeps are remembered, one per thread that
  // fills memory at once.
  sweep* at = &sweeps_[next_sweep_];
  for (sweep& w : sweeps_) {
    if (w.size > 0 && w.end == b) at = &w;
  }
  if (at->size > 0 && at->end == b) {
    window = std::min(2 * at->size, 64 * window);
  } else {
    next_sweep_ = (next_sweep_ + 1) % sweeps_.size();
  }
  at->size = window;
  block_index end = b + 1;
  const block_index range_end = std::min(first_ + fetching_.size(), range_of(s, b).second);
  for (; end < range_end && end < b + window; ++end) {
    if (s.tag_of(end) != tag::invalid || dir_.busy(end) || !dir_.held_by_nobody(end) || fetching_[end - first_] != 0 ||
        s.home(end) != me) {
      break;
    }
    dir_.set_owner(end, me);
    written_[end - first_] = 1;
  }
  at->end = end;
  if (end == b + 1) return;
  s.set_tags(b + 1, end, tag::read_write);
  claimed_.add(end - b - 1);
}

// A node alone in its job is home to every block and nobody will ever ask it for one, so a
// fault on fresh memory takes every fresh block of the aligned 2 MiB chunk around it at once,
// as a transparent huge page would: a program that fills an array in scattered order (RADIX's
// sort) faults once a chunk, not once a block or sweep. The memory layer has allocated the
// chunk's pages before the node lock (segment_options::fill_around_faults), so mapping them
// here allocates nothing (shmem still zeroes each page as it is first mapped).
void stache::claim_chunk(segment s, block_index b) {
  // Only blocks of the range b is in: stache runs them, and tsm::bind refuses the range now.
  const auto [range_first, range_end] = range_of(s, b);
  const block_index begin = std::max({first_, range_first, b - b % chunk_blocks_});
  const block_index end = std::min({first_ + fetching_.size(), range_end, b - b % chunk_blocks_ + chunk_blocks_});
  auto fresh = [&](block_index c) {
    return c != b && s.tag_of(c) == tag::invalid && !dir_.busy(c) && dir_.held_by_nobody(c) && fetching_[c - first_] == 0;
  };
  for (block_index run = begin; run < end;) {
    if (!fresh(run)) {
      ++run;
      continue;
    }
    block_index after = run;
    for (; after < end && fresh(after); ++after) {
      dir_.set_owner(after, squall::node());
      written_[after - first_] = 1;
    }
    s.set_tags(run, after, tag::read_write);
    claimed_.add(after - run);
    run = after;
  }
}

// --- cache side ---

bool stache::lower(segment s, block_index b, bool keep_read_only) {
  const bool owned = s.tag_of(b) == tag::read_write;
  exclusive_[b - first_] = 0;
  // The tag first: once it is lowered, no store of this node can reach the block any more.
  s.set_tag(b, keep_read_only ? tag::read_only : tag::invalid);
  invalidations_received_.add();
  if (owned) writebacks_.add();
  return owned;
}

bool stache::holding(segment s, block_index b) const {
  return held.protocol == this && held.s == s && held.b == b && !held.invalidated;
}

void stache::hold_invalidation(int home, bool keep_read_only) {
  held.invalidated = true;  // answered when the hold ends
  held.home = home;
  held.keep_read_only = keep_read_only;
  invalidations_held_total.add();
  if (held.since >= 0) end_hold_in_time();
}

void stache::on_invalidate(segment s, block_index b, int home, bool keep_read_only) {
  if (holding(s, b)) {
    hold_invalidation(home, keep_read_only);
    return;
  }
  answer_invalidation(s, b, home, keep_read_only);
}

void stache::answer_invalidation(segment s, block_index b, int home, bool keep_read_only) {
  const bool owned = lower(s, b, keep_read_only);
  if (home == squall::node()) {  // the home's own held copy: its bytes are the master copy
    if (dir_.answer(b)) grant(s, b);
    return;
  }
  tsm::send_block<&stache::on_ack>(home, s, b, owned);
}

void stache::on_grant(segment s, block_index b, int, block_part bytes, bool write, bool exclusive) {
  bytes.install(s, b, write ? tag::read_write : tag::read_only);
  exclusive_[b - first_] = exclusive ? 1 : 0;
  granted(s, b);
}

void stache::granted(segment s, block_index b) {
  if (fetching_[b - first_] != 0) {  // asked for by tsm::fetch: nobody faulted on it
    fetching_[b - first_] = 0;
    --fetches;
    return;
  }
  answered_ = true;
  release_hold();  // (an earlier one, if its deferred call has not run yet)
  if (grant_hold::hold_ns() > 0) {
    held.protocol = this;
    held.s = s;
    held.b = b;
    held.since = -1;
    ++held.generation;
  }
}

bool stache::fetch_ahead(segment s, block_index b) {
  if (s.tag_of(b) != tag::invalid || fetching_[b - first_] != 0) return false;
  fetched_.add();
  if (read_one_sided(s, b)) return false;  // no hold: nobody faulted on it
  fetching_[b - first_] = 1;
  ++fetches;
  ask_home(s, b, false);
  return true;
}

void stache::ask_home(segment s, block_index b, bool write) {
  const int home = s.home(b);
  if (home == squall::node()) {
    on_request(s, b, home, write);  // served in place: no message to itself
  } else {
    tsm::send<&stache::on_request>(home, s, b, write);
  }
}

std::size_t stache::fetches_in_flight() { return fetches; }

void stache::acquire(segment s, block_index b, bool write) {
  // A write to a block granted exclusively: the home already counts this node as its owner,
  // so the copy becomes writable here, without a message (E to M). Not a new access to
  // another block: any hold stays as it is.
  if (write && exclusive_[b - first_] != 0 && s.tag_of(b) == tag::read_only) {
    exclusive_[b - first_] = 0;
    s.set_tag(b, tag::read_write);
    silent_upgrades_.add();
    return;
  }
  // After finalize no message goes out or is answered: say so here, rather than end the
  // node with the usage_error of the first runtime call below ("terminate called after
  // throwing ... squall::node called after squall::finalize"). Safe on the SIGBUS path.
  if (!squall::initialized()) {
    detail::fail("a %s of block %zu of the TSM segment at %p after squall::finalize: a block this node "
                 "does not hold cannot be fetched once the runtime has stopped; finish with TSM memory "
                 "(or copy what is needed to private memory) before finalize",
                 write ? "write" : "read", b, static_cast<void*>(s.base()));
  }
  // A new fault: the access the last grant was for has run (or is this one), so the block
  // held for it is let go first. (Fault handlers run under the node lock already.)
  release_hold();
  bool first = true;
  // Asks until the tag allows the access: a message handled at the end of the wait may
  // already have taken the granted block away again.
  for (tag t = s.tag_of(b); !allows(t, write); t = s.tag_of(b)) {
    if (!first) {
      retries_.add();
    } else if (!write) {
      read_misses_.add();
    } else if (t == tag::read_only) {
      upgrades_.add();
    } else {
      write_misses_.add();
    }
    first = false;
    answered_ = false;
    if (!write && t == tag::invalid && read_one_sided(s, b)) {
      granted(s, b);  // the access runs next, as after a grant
      continue;
    }
    ask_home(s, b, write);
    // At the home the answer may be in already; a wait would first handle what has arrived,
    // and a request there could take the block away again before the access runs.
    if (!answered_) am::wait_until([this] { return answered_; });
  }
  // The access runs when this returns (or, on the fault-thread path, when the faulting
  // thread wakes): the hold ends a moment later unless another fault ends it first.
  if (!first && grant_hold::hold_ns() > 0) handler_returned();
}

}  // namespace squall::tsm::detail
