// SPDX-License-Identifier: BSD-3-Clause
// Stache's grant sent from the home's own fault, for a block so large that its parts wait for
// room in the lane, handling what arrives meanwhile. A request for the block handled during
// that wait must wait for the grant: the invalidation of the next transaction would otherwise
// reach the requester ahead of the grant's last part, and two nodes would then hold the block
// writable. Run on 3 nodes or more with SQUALL_TSM_HOLD_US=1000000, so that the home's hold
// ends at its next fault, not by a deferred call (CMakeLists.txt).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>

namespace {

using namespace squall;

std::atomic<bool> go{false};
void on_go(am::token&) { go.store(true); }
void wait_for_go() {
  am::wait_until([] { return go.exchange(false); });
}

TEST(GrantFromTheHomesFault, ComesBeforeTheNextTransactionsInvalidation) {
  if (nodes() < 3) GTEST_SKIP() << "needs a third node whose request comes in during the grant";
  // 64 MiB: the grant's parts fill the lane (256 KiB) hundreds of times, so the home's send
  // waits for room for many milliseconds.
  constexpr std::size_t bs = tsm::max_block_size;
  const int me = node();
  auto* p = static_cast<std::byte*>(
      tsm::alloc_bytes(2 * bs, {.block_size = bs, .homes = memory::home_policy::function([](memory::block_index) { return 0; })}));
  auto* b = reinterpret_cast<volatile std::uint64_t*>(p);       // block 0, homed at node 0
  auto* c = reinterpret_cast<volatile std::uint64_t*>(p + bs);  // block 1, homed at node 0
  tsm::barrier();
  if (me == 0) {
    b[0] = 1;  // the home's own write: granted in place, and held
    // The counts are atomic: read here while a fault thread or handler counts.
    const std::uint64_t served = tsm::counts_of(p).requests_served;
    am::send<on_go>(1);
    // Node 1's write request: its invalidation of this copy is held until this node's next fault.
    while (tsm::counts_of(p).requests_served == served) am::poll();
    am::send<on_go>(2);
    // That fault: the hold ends, and the grant of block 0 to node 1 leaves from this fault handler.
    EXPECT_EQ(c[0], 0u);
  } else if (me == 1) {
    wait_for_go();
    b[1] = 11;
  } else if (me == 2) {
    wait_for_go();
    // Its request arrives while node 0's fault sends node 1 the block's 64 MiB.
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    b[2] = 22;
  }
  tsm::barrier();
  // Every write above completed before the barrier: every node reads all three.
  EXPECT_EQ(b[0], 1u) << "node " << me;
  EXPECT_EQ(b[1], 11u) << "node " << me << " (node 1's write was lost)";
  EXPECT_EQ(b[2], 22u) << "node " << me;
  tsm::barrier();
  tsm::free(p);
}

}  // namespace
