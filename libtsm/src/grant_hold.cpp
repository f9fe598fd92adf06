// SPDX-License-Identifier: BSD-3-Clause
// The protocol kit's hold of a granted block (squall/tsm/hold.hpp).
#include <squall/tsm/hold.hpp>

#include <string>

#include <squall/am.hpp>
#include <squall/error.hpp>
#include <squall/settings.hpp>

namespace squall::tsm {

std::int64_t grant_hold::hold_ns() {
  static const std::int64_t ns = settings::number("SQUALL_TSM_HOLD_US", 50, 0, 1'000'000) * 1000;
  return ns;
}

void grant_hold::granted(memory::segment s, memory::block_index b) {
  end_locked();
  s_ = s;
  b_ = b;
  holding_ = true;
  since_ = -1;
}

void grant_hold::access_runs() {
  am::run_locked([this] {
    if (!holding_ || since_ >= 0) return;
    since_ = am::clock_ns();
    call_at_hold_end();
  });
}

bool grant_hold::defer(memory::segment s, memory::block_index b, int asked_by) {
  if (!holding_ || s != s_ || b != b_ || (since_ >= 0 && am::clock_ns() >= since_ + hold_ns())) return false;
  if (asked_by_ >= 0) {
    throw usage_error("tsm::grant_hold: a second recall of block " + std::to_string(b) + " (from node " +
                      std::to_string(asked_by) + ") while the first (from node " + std::to_string(asked_by_) +
                      ") waits for the hold's end");
  }
  asked_by_ = asked_by;
  call_at_hold_end();
  return true;
}

void grant_hold::end() {
  am::run_locked([this] { end_locked(); });
}

void grant_hold::quiesce() {
  am::wait_until([this] { return !call_pending_; });
}

void grant_hold::end_locked() {
  if (!holding_) return;
  holding_ = false;
  since_ = -1;
  const int asked_by = asked_by_;
  asked_by_ = -1;
  if (asked_by >= 0) answer_(owner_, s_, b_, asked_by);
}

// A deferred call at the hold's end, when a recall waits for it and the access has begun.
// One at a time: a call set for an earlier hold finds this one and sets itself again.
void grant_hold::call_at_hold_end() {
  if (asked_by_ < 0 || since_ < 0 || call_pending_) return;
  call_pending_ = true;
  am::call_at(since_ + hold_ns(), on_deadline, this);
}

void grant_hold::on_deadline(void* self) {
  auto& h = *static_cast<grant_hold*>(self);
  h.call_pending_ = false;
  if (h.holding_ && h.since_ >= 0 && am::clock_ns() >= h.since_ + hold_ns()) {
    h.end_locked();
  } else {
    h.call_at_hold_end();
  }
}

}  // namespace squall::tsm
