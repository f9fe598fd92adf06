// SPDX-License-Identifier: BSD-3-Clause
#include "collectives/inbox.hpp"

#include <squall/collectives.hpp>

#include <algorithm>
#include <atomic>

#include "am/registry.hpp"
#include "common/log.hpp"
#include "runtime/node.hpp"

namespace squall::coll {
namespace {

struct message {
  int src;
  kind k;
  std::uint32_t round;
  std::vector<std::byte> data;
};

// Guarded by the node lock (the handler below runs under it; receive() takes it). Never
// destroyed: the progress thread may run a handler while an exiting process destroys statics.
auto& inbox = *new std::map<std::uint64_t, std::vector<message>>;
// Written only by the thread calling collectives; read by handlers too (collectives_position).
std::atomic<std::uint64_t> next_seq{0};
std::atomic<kind> last_kind{kind::barrier};

}  // namespace
}  // namespace squall::coll

namespace squall::coll::detail {
// Allocates, also when a fault handler's wait runs it (a collective begun by another node).
void on_collective(am::token& t, std::uint64_t seq, kind k, std::uint32_t round, am::payload data) {
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

operation::operation(kind k) : kind_(k), seq_(next_seq.load()) {
  last_kind.store(k);
  next_seq.store(seq_ + 1);
}

operation::~operation() {
  for (auto& b : bulk_) b.wait_local();
}

void operation::send(int dest, std::uint32_t round, am::payload data) {
  if (data.size() <= am::max_payload()) {
    am::send<&detail::on_collective>(dest, seq_, kind_, round, data);
    am::flush(dest);
  } else {
    bulk_.push_back(am::bulk_send<&detail::on_collective>(dest, seq_, kind_, round, data));
  }
}

namespace {
// Under the node lock, while this node waits for `src`'s part of collective `seq`: a message
// of `src`'s for a later collective means it has gone past this one without sending that part
// (messages between two nodes arrive in the order sent), so the nodes disagree about it (a
// different root, or a collective one node left by an exception) and this wait may never end.
// Said once; the wait goes on, since a mistaken stop would end a job.
void say_if_gone_on(std::uint64_t seq, kind k, int src) {
  static std::uint64_t said_for = UINT64_MAX;
  if (said_for == seq) return;
  for (auto later = inbox.upper_bound(seq); later != inbox.end(); ++later) {
    for (const message& m : later->second) {
      if (m.src != src) continue;
      said_for = seq;
      warn("this node waits for node %d's part of %s (collective #%llu), but node %d has gone on to %s "
           "(collective #%llu): the nodes disagree about #%llu (a different root? a collective one node left "
           "by an exception?)",
           src, kind_name(k), static_cast<unsigned long long>(seq), src, kind_name(m.k),
           static_cast<unsigned long long>(later->first), static_cast<unsigned long long>(seq));
      return;
    }
  }
}

// Under the node lock: takes the message of `round` from `src` for collective `seq` into
// `out` if it is here. Any message of another kind for the same collective means the nodes
// called different collectives at this point: the job ends, saying which.
bool take_message(std::uint64_t seq, kind k, int src, std::uint32_t round, std::vector<std::byte>* out) {
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

std::vector<std::byte> operation::receive(int src, std::uint32_t round) {
  rt::node_runtime& nd = rt::require(kind_name(kind_));
  std::vector<std::byte> out;
  struct ctx_t {
    operation* op;
    int src;
    std::uint32_t round;
    std::vector<std::byte>* out;
  } ctx{this, src, round, &out};
  // Runs under the node lock: take the message out of the inbox if it is there.
  auto take = [](void* c) {
    auto* x = static_cast<ctx_t*>(c);
    return take_message(x->op->seq_, x->op->kind_, x->src, x->round, x->out);
  };
  rt::wait_until(nd, take, &ctx);
  return out;
}

bool operation::try_receive(int src, std::uint32_t round, std::vector<std::byte>& out) {
  rt::node_runtime& nd = rt::require(kind_name(kind_));
  std::lock_guard g(nd.lock);
  return take_message(seq_, kind_, src, round, &out);
}

bool operation::arrived(int src, std::uint32_t round) const {
  rt::node_runtime& nd = rt::require(kind_name(kind_));
  std::lock_guard g(nd.lock);
  return take_message(seq_, kind_, src, round, nullptr);
}

}  // namespace squall::coll

namespace squall::detail {
collective_position collectives_position() {
  const std::uint64_t begun = coll::next_seq.load();
  return {begun, begun == 0 ? "none" : coll::kind_name(coll::last_kind.load())};
}
}  // namespace squall::detail
