// SPDX-License-Identifier: BSD-3-Clause
// Barrier (dissemination), broadcast (binomial tree), reduce and allreduce (binomial tree
// to node 0, combining in node order), fence (termination detection by counting), the
// runtime's gather (every node straight to node 0), and the all-to-all of set-up steps.
#include <squall/collectives.hpp>

#include <cstring>

#include <squall/am.hpp>
#include <squall/runtime.hpp>

#include "collectives/inbox.hpp"
#include "collectives/internal.hpp"
#include "common/log.hpp"
#include "runtime/node.hpp"

namespace squall {
namespace {

// Returns whether any node passed `flag` true: after the last round every node has heard,
// directly or through others, from every node (so the OR of flags rides along for free).
bool dissemination_barrier(coll::kind k, bool flag = false) {
  const int n = nodes(), me = node();
  coll::operation op(k);
  std::uint32_t round = 0;
  for (int dist = 1; dist < n; dist <<= 1, ++round) {
    const std::byte mine{flag ? std::uint8_t{1} : std::uint8_t{0}};
    op.send((me + dist) % n, round, flag ? am::payload(&mine, 1) : am::payload{});
    flag = !op.receive((me - dist + n) % n, round).empty() || flag;
  }
  return flag;
}

// Binomial-tree broadcast of `bytes` at `data` from relative rank 0 = `root`.
void tree_broadcast(coll::operation& op, std::byte* data, std::size_t bytes, int root,
                    std::uint32_t round_base) {
  const int n = nodes(), me = node();
  const int r = (me - root + n) % n;
  int mask = 1;
  while (mask < n) {
    if (r & mask) {
      const auto got = op.receive((r - mask + root) % n, round_base);
      if (got.size() != bytes) {
        fatal("broadcast: node %d sent %zu bytes, this node expects %zu", (r - mask + root) % n,
              got.size(), bytes);
      }
      if (bytes != 0) std::memcpy(data, got.data(), bytes);
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (r + mask < n) op.send((r + mask + root) % n, round_base, am::payload(data, bytes));
  }
}

// Binomial-tree reduction to node 0: a node combines its children in increasing distance,
// which keeps the overall combination in node order.
void tree_reduce(coll::operation& op, std::byte* acc, std::size_t count, std::size_t elem,
                 const detail::combine_fn& combine) {
  const int n = nodes(), me = node();
  const std::size_t bytes = count * elem;
  for (int mask = 1; mask < n; mask <<= 1) {
    if (me & mask) {
      op.send(me - mask, 0, am::payload(acc, bytes));
      return;
    }
    if (me + mask < n) {
      const auto got = op.receive(me + mask, 0);
      if (got.size() != bytes) {
        fatal("reduce: node %d contributed %zu bytes, this node %zu (counts differ)", me + mask,
              got.size(), bytes);
      }
      combine(acc, got.data(), count);
    }
  }
}

}  // namespace

void barrier() {
  rt::require("squall::barrier");
  dissemination_barrier(coll::kind::barrier);
}

namespace detail {

bool finalize_barrier(bool flag) { return dissemination_barrier(coll::kind::finalize, flag); }

std::vector<std::vector<std::byte>> gather_bytes(std::span<const std::byte> mine) {
  const int n = nodes(), me = node();
  coll::operation op(coll::kind::gather);
  if (me != 0) {
    op.send(0, 0, am::payload(mine.data(), mine.size()));
    return {};
  }
  std::vector<std::vector<std::byte>> all;
  all.emplace_back(mine.begin(), mine.end());
  for (int src = 1; src < n; ++src) all.push_back(op.receive(src, 0));
  return all;
}

std::vector<std::vector<std::byte>> exchange_bytes(std::vector<std::vector<std::byte>> outgoing, const char* api) {
  rt::node_runtime& nd = rt::require(api);
  if (outgoing.size() != static_cast<std::size_t>(nd.n)) {
    throw usage_error(format("%s: one list per node is needed (%d), got %zu", api, nd.n, outgoing.size()));
  }
  coll::operation op(coll::kind::exchange);
  for (int i = 1; i < nd.n; ++i) {  // staggered, so that not every node sends to node 0 first
    const int d = (nd.me + i) % nd.n;
    op.send(d, 0, am::payload(outgoing[static_cast<std::size_t>(d)]));
  }
  std::vector<std::vector<std::byte>> incoming(static_cast<std::size_t>(nd.n));
  for (int i = 1; i < nd.n; ++i) {
    const int s = (nd.me - i + nd.n) % nd.n;
    incoming[static_cast<std::size_t>(s)] = op.receive(s, 0);
  }
  incoming[static_cast<std::size_t>(nd.me)] = std::move(outgoing[static_cast<std::size_t>(nd.me)]);
  return incoming;
}

void broadcast_bytes(void* data, std::size_t bytes, int root) {
  rt::node_runtime& nd = rt::require("squall::broadcast");
  if (root < 0 || root >= nd.n) throw usage_error(format("broadcast: root %d does not exist", root));
  coll::operation op(coll::kind::broadcast, root);
  tree_broadcast(op, static_cast<std::byte*>(data), bytes, root, 0);
}

void reduce_bytes(const void* in, void* out, std::size_t count, std::size_t out_count, std::size_t elem,
                  const combine_fn& combine, int root, bool all) {
  rt::node_runtime& nd = rt::require(all ? "squall::allreduce" : "squall::reduce");
  if (root < 0 || root >= nd.n) throw usage_error(format("reduce: root %d does not exist", root));
  if ((all || nd.me == root) && out_count < count) {
    throw usage_error(format("%s: the output holds %zu elements, fewer than the input's %zu",
                             all ? "allreduce" : "reduce", out_count, count));
  }
  const std::size_t bytes = count * elem;
  std::vector<std::byte> acc(static_cast<const std::byte*>(in), static_cast<const std::byte*>(in) + bytes);
  coll::operation op(all ? coll::kind::allreduce : coll::kind::reduce, all ? 0 : root);
  tree_reduce(op, acc.data(), count, elem, combine);
  if (all) {
    tree_broadcast(op, acc.data(), bytes, 0, 1);
    if (bytes != 0) std::memcpy(out, acc.data(), bytes);
    return;
  }
  if (root != 0) {  // the result is complete on node 0; hand it to root
    if (nd.me == 0) op.send(root, 1, am::payload(acc.data(), bytes));
    if (nd.me == root) acc = op.receive(0, 1);
  }
  if (nd.me == root && bytes != 0) std::memcpy(out, acc.data(), bytes);
}

}  // namespace detail

void fence() {
  rt::node_runtime& nd = rt::require("squall::fence");
  // Two consecutive waves that see the same totals, with every sent message handled,
  // prove that nothing is in flight (the four-counter method).
  std::uint64_t previous[2] = {~0ull, ~0ull};
  for (;;) {
    rt::locked(nd, [&] {
      nd.engine->flush_all();
      nd.engine->poll();
    });
    const std::uint64_t local[2] = {nd.engine->user_sent(), nd.engine->user_handled()};
    std::uint64_t total[2];
    {
      coll::operation op(coll::kind::fence);
      std::vector<std::byte> acc(reinterpret_cast<const std::byte*>(local),
                                 reinterpret_cast<const std::byte*>(local) + sizeof local);
      tree_reduce(op, acc.data(), 2, sizeof(std::uint64_t),
                  detail::elementwise<std::uint64_t>(op::sum{}));
      tree_broadcast(op, acc.data(), sizeof total, 0, 1);
      std::memcpy(total, acc.data(), sizeof total);
    }
    if (total[0] == total[1] && total[0] == previous[0] && total[1] == previous[1]) return;
    previous[0] = total[0];
    previous[1] = total[1];
  }
}

}  // namespace squall
