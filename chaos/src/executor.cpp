// SPDX-License-Identifier: BSD-3-Clause
// The executor: runs a communication pattern, one message per communicating pair.
//
// Executions are numbered with the node's other executor calls (call_order.hpp), the same
// on every node, so a message names its execution (and its kind and pattern, checked). A
// message that arrives before its execution has begun here is kept until it has; one for a
// begun execution is unpacked by the handler straight into the user's array.
#include <squall/am.hpp>
#include <squall/runtime.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "call_order.hpp"
#include "counters.hpp"
#include "pattern.hpp"

namespace squall::chaos::detail {

class pending {
 public:
  std::shared_ptr<pattern> pat;
  execution_arrays arrays;
  std::uint64_t seq = 0;
  int expected = 0;               // messages to receive
  std::atomic<int> arrived{0};    // messages received and unpacked (or kept, for scatter_op)
  std::vector<char> got;          // by peer index: its message arrived
  // scatter_op combines ghosts into owners in node order: a message is combined when it is
  // the next in that order, else kept here (by peer) until its turn.
  std::vector<std::vector<std::byte>> to_combine;
  std::size_t next_to_combine = 0;  // peer index
  std::vector<std::vector<std::byte>> large;       // packed buffers of bulk transfers
  std::vector<am::bulk_handle> bulks;
  std::size_t elements_sent = 0;
};

namespace {

struct early_message {
  int source;
  std::size_t elem_size, type_hash;
  std::vector<std::byte> bytes;
};

struct executions {
  std::map<std::uint64_t, pending*> running;                  // by call number
  std::map<std::uint64_t, std::vector<early_message>> early;  // by call number
};

// The mutex orders the handler (under the node lock) against begin and end on the
// program's thread.
std::mutex executions_mutex;
executions& current() {
  static auto* c = new executions;  // never destroyed: handlers may run at exit
  return *c;
}
std::uint64_t patterns_built = 0;

[[noreturn]] void mismatch(const char* what, int source, std::uint64_t id) {
  std::fprintf(stderr,
               "squall: chaos: node %d: a schedule execution from node %d does not match this node's (%s); "
               "every node must execute its schedules in the same order, with arrays of the same element type "
               "(schedule %llu)\n",
               squall::node(), source, what, static_cast<unsigned long long>(id));
  std::abort();
}

// Where the elements a peer sends in this execution land here.
const std::vector<index>& landing(const peer_lists& q, bool reverse) { return reverse ? q.send : q.recv; }
const std::vector<index>& packing(const peer_lists& q, bool reverse) { return reverse ? q.recv : q.send; }

void combine_into(const execution_arrays& a, const std::vector<index>& where, const std::byte* ghosts) {
  a.op(a.to.data, where.data(), ghosts, where.size());
}

// Skips peers that send nothing in this direction.
std::size_t next_sender(const pending& e, std::size_t k) {
  const auto& peers = e.pat->peers;
  while (k < peers.size() && landing(peers[k], e.arrays.reverse).empty()) ++k;
  return k;
}

void combine_in_order(pending& e, std::size_t k, const std::byte* bytes, std::size_t n) {
  const auto& peers = e.pat->peers;
  if (k != e.next_to_combine) {
    e.to_combine[k].assign(bytes, bytes + n);
    return;
  }
  combine_into(e.arrays, landing(peers[k], e.arrays.reverse), bytes);
  for (k = next_sender(e, k + 1); k < peers.size() && !e.to_combine[k].empty(); k = next_sender(e, k + 1)) {
    combine_into(e.arrays, landing(peers[k], e.arrays.reverse), e.to_combine[k].data());
    e.to_combine[k] = {};
  }
  e.next_to_combine = k;
}

void deliver(pending& e, int source, std::size_t elem_size, std::size_t type_hash, const std::byte* bytes,
             std::size_t n) {
  const execution_arrays& a = e.arrays;
  if (elem_size != a.to.elem_size || type_hash != a.to.type_hash) mismatch("element type", source, e.pat->id);
  const peer_lists* q = e.pat->peer(source);
  if (q == nullptr) mismatch("no elements expected from that node", source, e.pat->id);
  const auto& where = landing(*q, a.reverse);
  if (n != where.size() * elem_size) mismatch("element count", source, e.pat->id);
  if (a.op) {
    combine_in_order(e, static_cast<std::size_t>(q - e.pat->peers.data()), bytes, n);
  } else {
    a.to.unpack(a.to.data, where.data(), bytes, where.size());
  }
  e.got[static_cast<std::size_t>(q - e.pat->peers.data())] = 1;
  e.arrived.fetch_add(1, std::memory_order_release);
}

void on_elements(am::token& t, std::uint32_t kind, std::uint64_t id, std::uint64_t seq, std::uint64_t elem_size,
                 std::uint64_t type_hash, am::payload bytes) {
  check_arrival(t.source(), seq, {static_cast<call_kind>(kind), id});
  std::lock_guard<std::mutex> lock(executions_mutex);
  executions& c = current();
  auto it = c.running.find(seq);
  if (it == c.running.end()) {
    c.early[seq].push_back({t.source(), elem_size, type_hash, {bytes.begin(), bytes.end()}});
    count_early_message();
    return;
  }
  deliver(*it->second, t.source(), elem_size, type_hash, bytes.data(), bytes.size());
}

void check_bounds(const array_ref& a, index highest, const char* which) {
  if (highest >= 0 && a.count <= static_cast<std::size_t>(highest)) {
    throw usage_error(std::string("chaos: the ") + which + " array holds " + std::to_string(a.count) +
                      " elements, but the schedule uses position " + std::to_string(highest) +
                      " (it needs at least ghost_end() elements)");
  }
}

}  // namespace

std::uint64_t next_pattern_id() { return patterns_built++; }

std::shared_ptr<pattern> pattern::make(squall::comm_pattern lists) {
  auto p = std::make_shared<pattern>();
  static_cast<squall::comm_pattern&>(*p) = std::move(lists);
  p->id = next_pattern_id();
  return p;
}

pending* begin_pattern(const std::shared_ptr<pattern>& p, execution_arrays arrays) {
  const bool reverse = arrays.reverse;
  if (arrays.from.elem_size != arrays.to.elem_size) throw usage_error("chaos: source and destination arrays hold different element types");
  check_bounds(arrays.from, reverse ? p->highest_recv : p->highest_send, "source");
  check_bounds(arrays.to, reverse ? p->highest_send : p->highest_recv, "destination");

  auto e = std::make_unique<pending>();
  e->pat = p;
  e->arrays = std::move(arrays);
  const execution_arrays& a = e->arrays;
  const std::size_t size = a.from.elem_size;
  for (const auto& q : p->peers) e->expected += !landing(q, reverse).empty();
  e->got.assign(p->peers.size(), 0);
  if (a.op) {
    e->to_combine.resize(p->peers.size());
    e->next_to_combine = next_sender(*e, 0);
  }

  const call_desc call{a.kind, p->id};
  e->seq = begin_call(call);
  {
    std::lock_guard<std::mutex> lock(executions_mutex);
    current().running[e->seq] = e.get();
  }

  for (const auto& [from, to] : p->local) {
    std::memcpy(a.to.data + static_cast<std::size_t>(to) * size, a.from.data + static_cast<std::size_t>(from) * size, size);
  }
  // One-way data, which each peer waits for in its own end(): quiet, so that it does not
  // wake a peer's progress thread to take the core from the peer's computing program.
  const am::quiet_sends quiet;
  for (const auto& q : p->peers) {
    const auto& take = packing(q, reverse);
    if (take.empty()) continue;
    const std::size_t bytes = take.size() * size;
    count_message(bytes);
    e->elements_sent += take.size();
    if (bytes <= am::max_payload()) {
      // Packed straight into the outgoing packet: no buffer of our own to copy from.
      am::send_written<on_elements>(
          q.node, bytes, [&](std::byte* out) { a.from.pack(out, a.from.data, take.data(), take.size()); },
          static_cast<std::uint32_t>(call.kind), p->id, e->seq, std::uint64_t{size}, std::uint64_t{a.from.type_hash});
    } else {
      std::vector<std::byte>& buf = e->large.emplace_back(bytes);
      a.from.pack(buf.data(), a.from.data, take.data(), take.size());
      e->bulks.push_back(am::bulk_send<on_elements>(q.node, static_cast<std::uint32_t>(call.kind), p->id, e->seq, std::uint64_t{size},
                                                    std::uint64_t{a.from.type_hash}, am::payload(buf)));
    }
  }
  am::flush();
  // Messages that came before this execution began are unpacked only now that our data has
  // left (no peer waits for our unpacking), and under the lock like every other delivery
  // into this execution: the handler may deliver its next message meanwhile, on another thread.
  {
    std::lock_guard<std::mutex> lock(executions_mutex);
    executions& c = current();
    if (auto it = c.early.find(e->seq); it != c.early.end()) {
      for (const auto& m : it->second) deliver(*e, m.source, m.elem_size, m.type_hash, m.bytes.data(), m.bytes.size());
      c.early.erase(it);
    }
  }
  return e.release();
}

void end(pending* ended) {
  if (ended == nullptr) return;
  const std::unique_ptr<pending> e(ended);
  if (e->arrived.load(std::memory_order_acquire) < e->expected) {
    wait_for_call(
        e->seq, [&] { return e->arrived.load(std::memory_order_acquire) >= e->expected; },
        [&] {
          std::vector<int> silent;
          std::lock_guard<std::mutex> lock(executions_mutex);
          for (std::size_t k = 0; k < e->got.size(); ++k) {
            if (e->got[k] == 0 && !landing(e->pat->peers[k], e->arrays.reverse).empty()) {
              silent.push_back(e->pat->peers[k].node);
            }
          }
          return silent;
        });
  }
  end_call(e->seq);
  {
    std::lock_guard<std::mutex> lock(executions_mutex);
    current().running.erase(e->seq);
  }
  for (auto& b : e->bulks) b.wait_local();
  count_elements(e->elements_sent);
  count_execution();
}

}  // namespace squall::chaos::detail
