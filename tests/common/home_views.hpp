// SPDX-License-Identifier: BSD-3-Clause
// Whether this test run maps the other nodes' memory of its host (SQUALL_HOME_VIEWS, on unless
// 0; kernel-free/src/memory/home_views.hpp). Every node of the tests that ask runs on this host.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace squall::test {

inline bool home_views_on() {
  const char* v = std::getenv("SQUALL_HOME_VIEWS");
  return v == nullptr || std::string_view(v) != "0";
}

// Whether this node copies a block from its home without the home's processor
// (segment::copy_from_home): through a home view, or by a one-sided read over a network
// transport that offers them (UCX over its shared memory or RDMA, even with
// SQUALL_HOME_VIEWS=0), which the memory layer counts as memory.remote_reads. `remote_reads`:
// that count's change over the test's fetches. (The tests that asked home_views_on() alone
// failed over UCX with SQUALL_HOME_VIEWS=0: every fetch was a remote read.)
inline bool copies_from_home(std::uint64_t remote_reads) { return home_views_on() || remote_reads > 0; }

}  // namespace squall::test
