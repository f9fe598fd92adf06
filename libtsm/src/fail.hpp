// SPDX-License-Identifier: BSD-3-Clause
// Ending the job on a broken protocol invariant (a bug, not a user mistake): a message on
// standard error, then abort, so squallrun reports the node as lost. Safe in a fault handler
// on the SIGBUS path (no allocation).
#pragma once
#include <cstdio>
#include <cstdlib>

namespace squall::tsm::detail {

template <class... A>
[[noreturn]] void fail(const char* fmt, A... args) {
  std::fprintf(stderr, "squall tsm: ");
  std::fprintf(stderr, fmt, args...);
  std::fprintf(stderr, "\n");
  std::abort();
}

}  // namespace squall::tsm::detail
