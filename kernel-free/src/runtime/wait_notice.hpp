// SPDX-License-Identifier: BSD-3-Clause
// The clock of a wait that may depend on another node's program (a collective's part that
// node has yet to send, a lock its holder keeps): past SQUALL_WAIT_NOTICE_S it says, once,
// what it waits for, and goes on waiting. Kept in the wait's condition, which calls
// looked_in_vain() each time it finds nothing (under the node lock). The clock starts at the
// second look in vain: the first is usually followed by what was awaited, and reading the
// clock there made a 2-node barrier 3-5% slower.
#pragma once
#include <climits>
#include <cstdint>

#include "runtime/node.hpp"

namespace squall::rt {

class wait_notice {
 public:
  explicit wait_notice(const node_runtime& nd)
      : seconds_(nd.config.wait_notice_s), at_ns_(nd.config.wait_notice_s > 0 ? 0 : INT64_MAX) {}

  // True once: when the notice is due. The caller says it (warn) and counts it
  // (count_notice()).
  bool looked_in_vain() {
    if (at_ns_ == INT64_MAX) return false;
    if (at_ns_ == 0) {
      at_ns_ = 1;
      return false;
    }
    return due_by_the_clock();
  }
  std::int64_t seconds() const { return seconds_; }

 private:
  bool due_by_the_clock();

  std::int64_t seconds_;
  std::int64_t at_ns_;  // 0, 1: looks in vain so far; then when it is due; INT64_MAX: said, or never
};

void count_notice();  // wait.notices

}  // namespace squall::rt
