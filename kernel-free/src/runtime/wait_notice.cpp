// SPDX-License-Identifier: BSD-3-Clause
#include "runtime/wait_notice.hpp"

#include "common/futex.hpp"
#include "stats/counters.hpp"

namespace squall::rt {
namespace {
const int notices = stats::counter_slot("wait.notices");
}  // namespace

bool wait_notice::due_by_the_clock() {
  const std::int64_t now = now_ns();
  if (at_ns_ == 1) {
    at_ns_ = now + seconds_ * 1'000'000'000;
    return false;
  }
  if (now < at_ns_) return false;
  at_ns_ = INT64_MAX;
  return true;
}

void count_notice() { stats::counter_at(notices).fetch_add(1, std::memory_order_relaxed); }

}  // namespace squall::rt
