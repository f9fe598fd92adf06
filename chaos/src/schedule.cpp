// SPDX-License-Identifier: BSD-3-Clause
// The schedule object, merging, and the executor's typed entry points.
#include <squall/chaos/schedule.hpp>

#include <algorithm>
#include <string>
#include <unordered_map>

#include "agreement.hpp"
#include "schedule_state.hpp"

namespace squall::chaos {

schedule::schedule() = default;
schedule::schedule(std::shared_ptr<state> s) : s_(std::move(s)) {}
schedule::schedule(schedule&& o) noexcept : s_(std::move(o.s_)), moved_from_(o.moved_from_) { o.moved_from_ = true; }
schedule& schedule::operator=(schedule&& o) noexcept {
  if (this != &o) {
    s_ = std::move(o.s_);
    moved_from_ = o.moved_from_;
    o.moved_from_ = true;
  }
  return *this;
}
schedule::~schedule() = default;

index schedule::local_size() const { return internals() ? s_->local_size : 0; }
index schedule::ghost_begin() const { return internals() ? s_->ghost_begin : 0; }
index schedule::ghost_end() const { return internals() ? s_->ghost_end : 0; }
bool schedule::empty() const { return !internals() || s_->pat->peers.empty(); }

schedule_figures schedule::figures() const {
  schedule_figures f;
  if (!internals()) return f;
  for (const auto& q : s_->pat->peers) {
    f.peers_sent_to += !q.send.empty();
    f.peers_received_from += !q.recv.empty();
    f.elements_sent += static_cast<index>(q.send.size());
    f.elements_received += static_cast<index>(q.recv.size());
  }
  return f;
}

namespace {

// Why a and b cannot be merged on this node (empty: they can).
std::string merge_problem(const schedule::state& sa, const schedule::state& sb) {
  if (sa.local_size != sb.local_size) {
    return "the schedules were built for distributions of different local sizes (" + std::to_string(sa.local_size) +
           " and " + std::to_string(sb.local_size) + ")";
  }
  // b must be built on a (the incremental inspector) or fill other ghost slots: a slot that
  // holds one global index in a and another in b would be filled twice, with one lost.
  std::unordered_map<index, index> global_at;  // a's ghost slots
  for (const auto& [global, slot] : sa.ghost_of) global_at.emplace(slot, global);
  for (const auto& [global, slot] : sb.ghost_of) {
    const auto a_slot = sa.ghost_of.find(global);
    const auto a_global = global_at.find(slot);
    if ((a_slot != sa.ghost_of.end() && a_slot->second != slot) || (a_global != global_at.end() && a_global->second != global)) {
      return "ghost slot " + std::to_string(slot) + " holds global index " + std::to_string(global) +
             " in the second schedule but not in the first (build the second on the first: inspect(table, first, ...))";
    }
  }
  return {};
}

// The state of a schedule given to merge on this node as its `which` ("first", "second")
// argument: null for an empty one. One moved from is this node's problem, which the agreement
// refuses on every node like any other.
const schedule::state* merge_input(const schedule& s, const char* which, std::string& problem) {
  if (!s.moved_from()) return s.internals().get();
  if (problem.empty()) problem = std::string("the ") + which + " schedule is " + detail::moved_from_text("chaos::schedule");
  return nullptr;
}

}  // namespace

schedule merge(const schedule& a, const schedule& b) {
  std::string problem;
  const schedule::state* pa = merge_input(a, "first", problem);
  const schedule::state* pb = merge_input(b, "second", problem);
  if (problem.empty() && pa != nullptr && pb != nullptr) problem = merge_problem(*pa, *pb);
  // Agreed (collective) on every node, whatever its schedules, so that every node throws or
  // none does. (The local sizes were once checked before it, and a node whose sizes differed
  // left the others waiting in it; a node with an empty schedule once returned before it, and
  // left them waiting too.)
  detail::agree_or_throw(problem, "chaos::merge");
  // Every node makes the merged schedule's pattern, also from an empty schedule: patterns are
  // numbered in the order the nodes build them, and an execution names its pattern's number,
  // so a node that made none here would execute this schedule, and every later one, under
  // another number than its peers.
  auto s = std::make_shared<schedule::state>();
  if (pa == nullptr) std::swap(pa, pb);  // an empty schedule adds nothing
  if (pa != nullptr) {
    s->local_size = pa->local_size;
    s->ghost_begin = pa->ghost_begin;
    s->ghost_end = pa->ghost_end;
    s->ghost_of = pa->ghost_of;
  }
  if (pb != nullptr) {
    s->ghost_begin = std::min(s->ghost_begin, pb->ghost_begin);
    s->ghost_end = std::max(s->ghost_end, pb->ghost_end);
    s->ghost_of.insert(pb->ghost_of.begin(), pb->ghost_of.end());
  }
  s->pat = detail::pattern::make();  // collective: merge is called on every node, in order
  // Both sides concatenate a's list then b's for each peer, so the positions pair up.
  auto& peers = s->pat->peers;
  for (const auto* src : {pa, pb}) {
    if (src == nullptr) continue;
    for (const auto& q : src->pat->peers) {
      auto it = std::find_if(peers.begin(), peers.end(), [&](const auto& p) { return p.node == q.node; });
      if (it == peers.end()) it = peers.insert(peers.end(), squall::peer_lists{q.node, {}, {}});
      it->send.insert(it->send.end(), q.send.begin(), q.send.end());
      it->recv.insert(it->recv.end(), q.recv.begin(), q.recv.end());
    }
  }
  std::sort(peers.begin(), peers.end(), [](const auto& x, const auto& y) { return x.node < y.node; });
  s->pat->finish_bounds();
  return schedule(std::move(s));
}

execution& execution::operator=(execution&& o) noexcept {
  if (this != &o) {
    finish();
    p_ = o.p_;
    moved_from_ = o.moved_from_;
    o.p_ = nullptr;
    o.moved_from_ = true;
  }
  return *this;
}

void execution::end() {
  if (moved_from_) detail::used_after_move("chaos::execution");
  finish();
}

void execution::finish() {
  detail::pending* p = p_;
  p_ = nullptr;
  detail::end(p);
}

namespace detail {

pending* begin(const schedule& s, direction d, array_ref a, combine_fn op) {
  if (!s.internals()) return nullptr;  // empty: moves nothing (moved from: internals() throws)
  const auto& st = *s.internals();
  if (a.count < static_cast<std::size_t>(st.ghost_end)) {
    throw usage_error("chaos: the data array holds " + std::to_string(a.count) + " elements; the schedule needs " +
                      std::to_string(st.ghost_end) + " (local_size() owned, then the ghost area up to ghost_end())");
  }
  const call_kind kind = d == direction::gather    ? call_kind::gather
                         : d == direction::scatter ? call_kind::scatter
                                                   : call_kind::scatter_op;
  execution_arrays arrays{a, a, std::move(op), d != direction::gather, kind};
  return begin_pattern(st.pat, std::move(arrays));
}

}  // namespace detail
}  // namespace squall::chaos
