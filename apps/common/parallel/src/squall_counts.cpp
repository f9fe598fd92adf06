// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/squall_counts.hpp"

#include <array>

#include <squall/collectives.hpp>

namespace squall::apps {
namespace {

// This node's figures in RunCounts' order: messages, bytes, misses, invalidations, lock waits.
// A block asked for by tsm::fetch counts as a miss, taken ahead of time: the same request and
// grant, so the versions' miss counts compare like with like.
std::array<double, 5> figures_of(const stats::snapshot& s) {
  double bytes = 0;
  for (const auto& h : s.handlers) bytes += static_cast<double>(h.sent_bytes);
  const auto get = [&s](const char* name) { return static_cast<double>(s.get(name)); };
  return {get("am.messages_sent"), bytes, get("tsm.read_misses") + get("tsm.write_misses") + get("tsm.upgrades") + get("tsm.fetched"),
          get("tsm.invalidations_sent"), get("tsm.lock_requests_queued")};
}

}  // namespace

CountedRegion::CountedRegion() {
  squall::barrier();
  before_ = stats::take();
  start_ = std::chrono::steady_clock::now();
}

void CountedRegion::end() {
  const double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const stats::snapshot after = stats::take();
  const std::array<double, 5> a = figures_of(after), b = figures_of(before_);
  std::array<double, 5> delta{};
  for (std::size_t i = 0; i < delta.size(); ++i) delta[i] = a[i] - b[i];
  squall::allreduce(std::span<const double>(delta), std::span<double>(delta));
  seconds_ = squall::allreduce(mine, squall::op::max{});
  counts_ = {delta[0], delta[1], delta[2], delta[3], delta[4]};
}

}  // namespace squall::apps
