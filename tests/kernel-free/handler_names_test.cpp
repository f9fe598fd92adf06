// SPDX-License-Identifier: BSD-3-Clause
// Handlers may have any name in any namespace, also the names the runtime's own handlers
// have in its source; and fence() waits for the messages of every handler, those of a
// library's protocol in namespace squall:: (as libtsm's are) included.
#include <gtest/gtest.h>

#include <atomic>

#include <squall/squall.hpp>

namespace am = squall::am;

// The same unqualified names as the runtime's handlers of am::call replies, bulk
// acknowledgements and collectives.
int on_reply(am::token&, int x) { return x + 1; }
void on_bulk_ack(am::token&, std::uint32_t) {}
std::atomic<int> collective_seen{0};
void on_collective(am::token&, int x, am::payload bytes) { collective_seen += x + static_cast<int>(bytes.size()); }

// And the runtime's own qualified name for its collectives' handler.
namespace squall::coll::detail {
int on_collective(am::token&, int x) { return 2 * x; }
}  // namespace squall::coll::detail

namespace {

TEST(HandlerNames, AnyNameWorksAlongsideTheRuntimesHandlers) {
  const int me = squall::node(), n = squall::nodes(), next = (me + 1) % n;
  EXPECT_EQ(am::call<on_reply>(next, me), me + 1);
  EXPECT_EQ(am::call<squall::coll::detail::on_collective>(next, me), 2 * me);
  const char bytes[3] = {};
  am::send<on_collective>(next, 10, am::as_payload(bytes, 3));
  am::send<on_bulk_ack>(next, std::uint32_t{7});
  squall::fence();
  EXPECT_EQ(collective_seen.exchange(0), 13);
  EXPECT_EQ(squall::allreduce(1L), static_cast<long>(n));  // the runtime's collectives still work
}

// A chain of `hops` messages passed from node to node, each sent by the previous one's
// handler: fence() returns only after the last one was handled.
constexpr int hops = 2000;
std::atomic<int> handled{0};

template <void (*Self)(am::token&, int)>
void pass_on(int remaining) {
  ++handled;
  if (remaining > 0) am::send<Self>((squall::node() + 1) % squall::nodes(), remaining - 1);
}

void program_hop(am::token&, int remaining) { pass_on<&program_hop>(remaining); }

template <void (*Hop)(am::token&, int)>
void expect_fence_waits_for_the_chain() {
  handled = 0;
  squall::barrier();
  if (squall::node() == 0) am::send<Hop>(1 % squall::nodes(), hops - 1);
  squall::fence();
  EXPECT_EQ(squall::allreduce(static_cast<long>(handled.load())), hops);
}

TEST(Fence, WaitsForAChainOfProgramMessages) { expect_fence_waits_for_the_chain<&program_hop>(); }

}  // namespace

// A protocol library's message, named inside squall:: like libtsm's.
namespace squall::protocol_test {
void hop(am::token&, int remaining) { pass_on<&hop>(remaining); }
}  // namespace squall::protocol_test

namespace {
TEST(Fence, WaitsForAChainOfProtocolMessagesInNamespaceSquall) {
  expect_fence_waits_for_the_chain<&squall::protocol_test::hop>();
}
}  // namespace
