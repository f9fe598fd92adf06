// SPDX-License-Identifier: BSD-3-Clause
// A problem that one node finds in a collective operation (checkpoint, restart, quiesce),
// thrown on every node alike.
#include <squall/collectives.hpp>

#include <cstdint>
#include <span>
#include <string>

#include "runtime.hpp"

namespace squall::arrays::detail {

// Collective: throws on every node the first of the nodes' problems (the lowest-numbered
// node's that has one; `mine` is empty when this node has none), so that a program that
// catches it goes on in step. Returns when no node has one.
void agree_on_problem(const runtime& r, const std::string& mine) {
  const int first = squall::allreduce(mine.empty() ? r.nodes : r.me, squall::op::min{});
  if (first == r.nodes) return;
  std::string why = mine;
  std::uint64_t size = why.size();
  squall::broadcast(size, first);
  why.resize(size);
  squall::broadcast(std::span<char>(why.data(), why.size()), first);
  throw squall::usage_error(why);
}

}  // namespace squall::arrays::detail
