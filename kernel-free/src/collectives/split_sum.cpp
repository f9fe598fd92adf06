// SPDX-License-Identifier: BSD-3-Clause
// allreduce_sum (squall/collectives.hpp): a flat sum in split phases. Round 0 carries each
// node's numbers to node 0; round 1 carries the sum from node 0 to every node.
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>

#include <cstring>

#include "collectives/inbox.hpp"
#include "common/log.hpp"
#include "runtime/node.hpp"

namespace squall {

struct allreduce_sum::state {
  coll::operation op{coll::kind::split_sum};
  std::vector<std::uint64_t> sum;
  std::vector<bool> added;  // node 0: whose numbers are in `sum`
  int missing = 0;          // node 0: how many are not yet
  bool done = false;
};

namespace {
am::payload bytes_of(const std::vector<std::uint64_t>& v) {
  return {reinterpret_cast<const std::byte*>(v.data()), v.size() * sizeof(std::uint64_t)};
}

void add_into(std::vector<std::uint64_t>& sum, const std::vector<std::byte>& got, int from) {
  if (got.size() != sum.size() * sizeof(std::uint64_t)) {
    fatal("allreduce_sum: node %d added %zu numbers, this node %zu", from, got.size() / sizeof(std::uint64_t),
          sum.size());
  }
  for (std::size_t i = 0; i < sum.size(); ++i) {
    std::uint64_t x = 0;
    std::memcpy(&x, got.data() + i * sizeof x, sizeof x);
    sum[i] += x;
  }
}
}  // namespace

// The runtime is checked before the state's operation takes the next collective's number.
allreduce_sum::allreduce_sum(std::span<const std::uint64_t> mine)
    : s_((rt::require("squall::allreduce_sum"), std::make_unique<state>())) {
  s_->sum.assign(mine.begin(), mine.end());
  const int n = nodes();
  if (node() != 0) {
    s_->op.send(0, 0, bytes_of(s_->sum));
    return;
  }
  s_->added.assign(static_cast<std::size_t>(n), false);
  s_->added[0] = true;
  s_->missing = n - 1;
  progress();
}

allreduce_sum::~allreduce_sum() {
  if (!s_->done) s_->op.abandon();  // its sum's late parts are dropped
}

bool allreduce_sum::ready() const {
  if (s_->done) return true;
  if (node() != 0) return s_->op.arrived(0, 1);
  for (int src = 1; src < static_cast<int>(s_->added.size()); ++src) {
    if (!s_->added[static_cast<std::size_t>(src)] && s_->op.arrived(src, 0)) return true;
  }
  return false;
}

bool allreduce_sum::progress() {
  if (s_->done) return true;
  std::vector<std::byte> got;
  if (node() != 0) {
    if (!s_->op.try_receive(0, 1, got)) return false;
    s_->sum.assign(s_->sum.size(), 0);
    add_into(s_->sum, got, 0);
    return s_->done = true;
  }
  for (int src = 1; src < static_cast<int>(s_->added.size()); ++src) {
    if (s_->added[static_cast<std::size_t>(src)] || !s_->op.try_receive(src, 0, got)) continue;
    add_into(s_->sum, got, src);
    s_->added[static_cast<std::size_t>(src)] = true;
    --s_->missing;
  }
  if (s_->missing != 0) return false;
  for (int dest = 1; dest < static_cast<int>(s_->added.size()); ++dest) s_->op.send(dest, 1, bytes_of(s_->sum));
  return s_->done = true;
}

std::span<const std::uint64_t> allreduce_sum::result() const {
  if (!s_->done) fatal("allreduce_sum::result() before progress() returned true");
  return s_->sum;
}

}  // namespace squall
