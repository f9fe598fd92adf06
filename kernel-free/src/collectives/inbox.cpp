// SPDX-License-Identifier: BSD-3-Clause
#include "collectives/inbox.hpp"

#include <squall/collectives.hpp>

#include <algorithm>
#include <atomic>
#include <exception>
#include <set>

#include "am/registry.hpp"
#include "common/log.hpp"
#include "runtime/node.hpp"
#include "runtime/wait_notice.hpp"

namespace squall::coll {
namespace {

struct message {
  int src;
  kind k;
  std::uint32_t round;  // as on the wire: the collective's root above kRoundBits
  std::vector<std::byte> data;
};

// A collective's rounds are few (a dissemination barrier has log2(nodes) of them); the bits
// above carry its root.
constexpr unsigned kRoundBits = 8;
int root_of(std::uint32_t wire_round) { return static_cast<int>(wire_round >> kRoundBits); }

// Guarded by the node lock (the handler below runs under it; receive() takes it). Never
// destroyed: the progress thread may run a handler while an exiting process destroys statics.
auto& inbox = *new std::map<std::uint64_t, std::vector<message>>;
auto& dropped_ops = *new std::set<std::uint64_t>;  // left by an exception, or abandoned
// By source: the latest collective it sent a part of (1 + its number; 0: none yet), and its
// kind. A wait tells from it at once whether a peer has gone past what it waits for: a walk of
// the inbox made a long run-ahead (a reduce's leaves do not wait for the root) quadratic.
struct latest_part {
  std::uint64_t seq_plus_one = 0;
  kind k = kind::barrier;
};
auto& latest_from = *new std::vector<latest_part>;
// Written by the thread calling collectives; read by handlers too (collectives_position).
std::atomic<std::uint64_t> next_seq{0};
std::atomic<kind> last_kind{kind::barrier};
// Every collective below this one has ended on this node: a part of one of them that comes
// now was not taken. Collectives end in the order they began, but for a split-phase sum
// (allreduce_sum) still open: those that ended after it wait in `ended_early` (touched by
// the thread calling collectives only) until it ends.
std::atomic<std::uint64_t> ended_below{0};
auto& ended_early = *new std::set<std::uint64_t>;

// `src`'s part of a collective this node has ended: the nodes disagree about that collective,
// a mismatch as the other check says it (so that either may find it first: WireErrors).
[[noreturn]] void part_of_ended(int src, kind k, std::uint64_t seq, std::uint32_t wire_round, const char* what) {
  fatal("collective mismatch: node %d's part of %s (collective #%llu, root node %d) %s, so the nodes disagree "
        "about it (a different root? a collective one node skipped?)",
        src, kind_name(k), static_cast<unsigned long long>(seq), root_of(wire_round), what);
}

// The end of collective `seq` on this node (the thread calling collectives).
void mark_ended(std::uint64_t seq) {
  std::uint64_t below = ended_below.load(std::memory_order_relaxed);
  if (seq != below) {
    ended_early.insert(seq);
    return;
  }
  ++below;
  while (!ended_early.empty() && *ended_early.begin() == below) {
    ended_early.erase(ended_early.begin());
    ++below;
  }
  ended_below.store(below, std::memory_order_release);
}

}  // namespace
}  // namespace squall::coll

namespace squall::coll::detail {
// Allocates, also when a fault handler's wait runs it (a collective begun by another node).
void on_collective(am::token& t, std::uint64_t seq, kind k, std::uint32_t round, am::payload data) {
  if (seq < ended_below.load(std::memory_order_acquire)) {
    if (dropped_ops.contains(seq)) return;
    part_of_ended(t.source(), k, seq, round, "came after this node had ended that collective");
  }
  const auto src = static_cast<std::size_t>(t.source());
  if (latest_from.size() <= src) latest_from.resize(src + 1);
  if (seq + 1 > latest_from[src].seq_plus_one) latest_from[src] = {seq + 1, k};
  inbox[seq].push_back({t.source(), k, round, std::vector<std::byte>(data.begin(), data.end())});
}
}  // namespace squall::coll::detail

// The runtime's own handler, under its own name: fence() runs on it, so it must not count it.
template <>
struct squall::am::detail::registration<&squall::coll::detail::on_collective> {
  static inline const handler_entry* const entry =
      register_runtime_handler<&squall::coll::detail::on_collective>("squall.collective");
};

namespace squall::coll {

const char* kind_name(kind k) {
  switch (k) {
    case kind::barrier: return "barrier";
    case kind::broadcast: return "broadcast";
    case kind::reduce: return "reduce";
    case kind::allreduce: return "allreduce";
    case kind::fence: return "fence";
    case kind::finalize: return "finalize";
    case kind::gather: return "gather";
    case kind::exchange: return "exchange";
    case kind::split_sum: return "split-phase sum (allreduce_sum)";
  }
  return "unknown collective";
}

operation::operation(kind k, int root)
    : kind_(k), root_(root), uncaught_(std::uncaught_exceptions()), seq_(next_seq.load(std::memory_order_relaxed)) {
  last_kind.store(k);
  next_seq.store(seq_ + 1);
}

operation::~operation() {
  for (auto& b : bulk_) b.wait_local();
  // Outside init..finalize the collective has sent and received nothing, and the caller is
  // already being told so (require() threw); throwing again from here ended the process.
  rt::node_runtime* nd = rt::current();
  if (nd != nullptr && (abandoned_ || std::uncaught_exceptions() > uncaught_)) {
    rt::locked(*nd, [this] {
      dropped_ops.insert(seq_);
      inbox.erase(seq_);
    });
  }
  // A part left untaken is found by the next receive (take_message), under the node lock.
  mark_ended(seq_);
}

std::uint32_t operation::wire_round(std::uint32_t round) const {
  return static_cast<std::uint32_t>(root_) << kRoundBits | round;
}

void operation::send(int dest, std::uint32_t round, am::payload data) {
  if (data.size() <= am::max_payload()) {
    am::send<&detail::on_collective>(dest, seq_, kind_, wire_round(round), data);
    am::flush(dest);
  } else {
    bulk_.push_back(am::bulk_send<&detail::on_collective>(dest, seq_, kind_, wire_round(round), data));
  }
}

namespace {
// Under the node lock, while this node waits for `src`'s part of collective `seq`: a message
// of `src`'s for a later collective means it has gone past this one without sending that part
// (messages between two nodes arrive in the order sent), so the nodes disagree about it (a
// collective one node left by an exception, or skipped) and this wait may never end.
// Said once; the wait goes on, since a mistaken stop would end a job.
// Under the node lock: the latest collective `src` sent this node a part of, if it is
// collective `first` or a later one.
std::optional<later_collective> latest_from_on(int src, std::uint64_t first) {
  const auto i = static_cast<std::size_t>(src);
  if (i >= latest_from.size() || latest_from[i].seq_plus_one <= first) return std::nullopt;
  return later_collective{latest_from[i].seq_plus_one - 1, kind_name(latest_from[i].k)};
}

void say_if_gone_on(std::uint64_t seq, kind k, int src) {
  static std::uint64_t said_for = UINT64_MAX;
  if (said_for == seq) return;
  const auto later = latest_from_on(src, seq + 1);
  if (!later) return;
  said_for = seq;
  warn("this node waits for node %d's part of %s (collective #%llu), but node %d has gone on to %s "
       "(collective #%llu): the nodes disagree about #%llu (a collective one node left by an exception, or "
       "skipped?)",
       src, kind_name(k), static_cast<unsigned long long>(seq), src, later->name,
       static_cast<unsigned long long>(later->seq), static_cast<unsigned long long>(seq));
}

[[noreturn]] void disagree_about_root(kind k, std::uint64_t seq, const message& m, int root) {
  fatal("the nodes disagree about the root of %s (collective #%llu): node %d's is node %d, this node's node %d",
        kind_name(k), static_cast<unsigned long long>(seq), m.src, root_of(m.round), root);
}

// Under the node lock: takes the message of `round` (as on the wire) from `src` for collective
// `seq` into `out` if it is here. Any message of another kind or another root for the same
// collective means the nodes called different collectives at this point, and one left from a
// collective this node has ended that they disagreed about it: the job ends, saying which.
bool take_message(std::uint64_t seq, kind k, int src, std::uint32_t round, std::vector<std::byte>* out) {
  while (!inbox.empty() && inbox.begin()->first < ended_below.load(std::memory_order_relaxed)) {
    const auto& [left_seq, left] = *inbox.begin();
    if (dropped_ops.contains(left_seq)) {  // came between its drop and its end
      inbox.erase(inbox.begin());
      continue;
    }
    const message& m = left.front();
    part_of_ended(m.src, m.k, left_seq, m.round, "was never taken: this node ended that collective without it");
  }
  auto it = inbox.find(seq);
  if (it == inbox.end()) {
    say_if_gone_on(seq, k, src);
    return false;
  }
  auto& msgs = it->second;
  for (auto m = msgs.begin(); m != msgs.end(); ++m) {
    if (m->k != k) {
      fatal("collective mismatch: this node called %s (collective #%llu) but node %d called %s", kind_name(k),
            static_cast<unsigned long long>(seq), m->src, kind_name(m->k));
    }
    if (root_of(m->round) != root_of(round)) disagree_about_root(k, seq, *m, root_of(round));
    if (m->src != src || m->round != round) continue;
    if (out == nullptr) return true;
    *out = std::move(m->data);
    msgs.erase(m);
    if (msgs.empty()) inbox.erase(it);
    return true;
  }
  say_if_gone_on(seq, k, src);
  return false;
}
}  // namespace

std::optional<later_collective> peer_gone_on(int peer) {
  static std::uint64_t said_for = UINT64_MAX;
  const auto later = latest_from_on(peer, next_seq.load(std::memory_order_relaxed));
  if (!later || said_for == later->seq) return std::nullopt;
  said_for = later->seq;
  return later;
}

std::vector<std::byte> operation::receive(int src, std::uint32_t round) {
  rt::node_runtime& nd = rt::require(kind_name(kind_));
  std::vector<std::byte> out;
  struct ctx_t {
    operation* op;
    int src;
    std::uint32_t round;
    std::vector<std::byte>* out;
    rt::wait_notice notice;
  } ctx{this, src, wire_round(round), &out, rt::wait_notice(nd)};
  // Runs under the node lock: take the message out of the inbox if it is there. A peer
  // that is alive but never sends its part (it waits elsewhere, or calls the collective
  // later) is waited for, and said (rt::wait_notice).
  auto take = [](void* c) {
    auto* x = static_cast<ctx_t*>(c);
    if (take_message(x->op->seq_, x->op->kind_, x->src, x->round, x->out)) return true;
    if (x->notice.looked_in_vain()) x->op->say_still_waiting(x->src, x->notice.seconds());
    return false;
  };
  rt::wait_until(nd, take, &ctx);
  return out;
}

void operation::say_still_waiting(int src, std::int64_t seconds) const {
  rt::count_notice();
  warn("has waited %lld s for node %d's part of %s (collective #%llu); still waiting (does every node call the same "
       "collectives in the same order? SQUALL_WAIT_NOTICE_S)",
       static_cast<long long>(seconds), src, kind_name(kind_), static_cast<unsigned long long>(seq_));
}

bool operation::try_receive(int src, std::uint32_t round, std::vector<std::byte>& out) {
  rt::node_runtime& nd = rt::require(kind_name(kind_));
  std::lock_guard g(nd.lock);
  return take_message(seq_, kind_, src, wire_round(round), &out);
}

bool operation::arrived(int src, std::uint32_t round) const {
  rt::node_runtime& nd = rt::require(kind_name(kind_));
  std::lock_guard g(nd.lock);
  return take_message(seq_, kind_, src, wire_round(round), nullptr);
}

}  // namespace squall::coll

namespace squall::detail {
collective_position collectives_position() {
  const std::uint64_t begun = coll::next_seq.load();
  return {begun, begun == 0 ? "none" : coll::kind_name(coll::last_kind.load())};
}
}  // namespace squall::detail
