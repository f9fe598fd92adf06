// SPDX-License-Identifier: BSD-3-Clause
// A future's get() on a job of several nodes that waits longer than SQUALL_WAIT_NOTICE_S
// (1 s here, set by CMake) says, once, what it waits for, instead of waiting in silence: a
// request the element's home holds because no such element exists, or a method that has not
// answered. It still gets its result when it comes. Node 0 asks; the last node is the home of
// every index. Run on 2 and 4 nodes (one node fails such a get() at once: errors_test). So
// does a quiesce or destroy() that another node has not reached.
#include <gtest/gtest.h>

#include <squall/arrays.hpp>
#include <squall/runtime.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

namespace arrays = squall::arrays;

namespace {

int me() { return squall::node(); }
int last() { return squall::nodes() - 1; }

struct Cell : arrays::element<arrays::index1d> {
  std::int64_t value = 7;
  std::int64_t get() { return value; }
  std::int64_t slow_get() {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    return value;
  }
  template <class A>
  void serialize(A& ar) {
    ar(value);
  }
};

arrays::array<Cell> homed_on_last_node() {
  return arrays::array<Cell>::create(arrays::user_home([](const arrays::key&, int nodes) { return nodes - 1; }));
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// What get() said on standard error while it waited for `f`'s result, which must be 7; it
// says it once, and counts it.
std::string said_while_getting(arrays::future<std::int64_t>& f) {
  const std::uint64_t notices = arrays::counts().wait_notices;
  testing::internal::CaptureStderr();
  const std::int64_t v = f.get();
  EXPECT_EQ(v, 7);
  EXPECT_EQ(arrays::counts().wait_notices, notices + 1);
  return testing::internal::GetCapturedStderr();
}

// On the home (the last node): once a request is held here, runs `then`.
template <class Then>
void once_a_request_is_held(Then&& then) {
  const std::uint64_t before = arrays::counts().held;
  arrays::run_until([before] { return arrays::counts().held > before; });
  then();
}

TEST(WaitNotice, GetNamesTheMissingElementItsHomeHolds) {
  if (squall::nodes() < 2) GTEST_SKIP() << "one node fails such a get() at once";
  auto a = homed_on_last_node();
  if (me() == 0) {
    auto f = a[5].request<&Cell::get>();
    const std::string said = said_while_getting(f);
    EXPECT_TRUE(contains(said, "node 0's get() has waited 1 s for a request to element (5) of array " +
                                   std::to_string(a.id()) + ", which its home, node " + std::to_string(last()) +
                                   ", holds because no such element exists"))
        << said;
    EXPECT_TRUE(contains(said, "it is answered if the element is inserted")) << said;
  } else if (me() == last()) {
    // Once the request is held here, wait past the notice, then insert the element: the
    // held request runs and node 0's get() returns.
    once_a_request_is_held([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      a.insert(5);
    });
  }
  arrays::quiesce();
}

TEST(WaitNotice, GetSaysItWaitsForAMethodThatHasNotAnswered) {
  if (squall::nodes() < 2) GTEST_SKIP() << "one node";
  auto a = homed_on_last_node();
  if (me() == last()) a.insert(3);
  arrays::quiesce();
  if (me() == 0) {
    auto f = a[3].request<&Cell::slow_get>();
    const std::string said = said_while_getting(f);
    EXPECT_TRUE(contains(said, "node 0's get() has waited 1 s for a request's result; its entry method has not "
                               "answered yet"))
        << said;
  }
  arrays::quiesce();
}

// A request held, then released when its element is inserted, waits for its method: the
// notice says so, not that the element does not exist (it did, until the home said it was
// released).
TEST(WaitNotice, ARequestReleasedByAnInsertionWaitsForItsMethod) {
  if (squall::nodes() < 2) GTEST_SKIP() << "one node";
  auto a = homed_on_last_node();
  if (me() == 0) {
    auto f = a[6].request<&Cell::slow_get>();
    const std::string said = said_while_getting(f);
    EXPECT_TRUE(contains(said, "its entry method has not answered yet")) << said;
    EXPECT_FALSE(contains(said, "no such element exists")) << said;
  } else if (me() == last()) {
    once_a_request_is_held([&] { a.insert(6); });
  }
  arrays::quiesce();
}

// Each get() must not leave a timer of its own behind: the substrate holds at most 16
// deferred calls, and more ended the process.
TEST(WaitNotice, ManyQuickGetsSayNothing) {
  if (squall::nodes() < 2) GTEST_SKIP() << "one node";
  auto a = homed_on_last_node();
  if (me() == last()) a.insert(1);
  arrays::quiesce();
  if (me() == 0) {
    const std::uint64_t notices = arrays::counts().wait_notices;
    testing::internal::CaptureStderr();
    std::int64_t sum = 0;
    for (int i = 0; i < 200; ++i) sum += a[1].request<&Cell::get>().get();
    const std::string said = testing::internal::GetCapturedStderr();
    EXPECT_EQ(sum, 200 * 7);
    EXPECT_EQ(arrays::counts().wait_notices, notices);
    EXPECT_FALSE(contains(said, "has waited")) << said;
  }
  arrays::quiesce();
}

// A quiesce (or destroy()) that another node has not reached: after the notice's time the
// waiting node says so, once, and counts it; it ends when the late node comes.
TEST(WaitNotice, QuiesceAndDestroyThatAnotherNodeHasNotReachedSaySo) {
  if (squall::nodes() < 2) GTEST_SKIP() << "one node";
  auto a = homed_on_last_node();
  const std::string in_quiesce = "node 0 has waited 1 s in quiesce() (or at_sync, checkpoint, restart) for the other "
                                 "nodes to reach it; still waiting (every node must call it)";
  const std::string in_destroy =
      "node 0 has waited 1 s in array " + std::to_string(a.id()) + "'s destroy() for the other nodes to reach it";
  for (const std::string& expected : {in_quiesce, in_destroy}) {
    if (me() == 0) {
      const std::uint64_t notices = arrays::counts().wait_notices;
      testing::internal::CaptureStderr();
      expected == in_quiesce ? arrays::quiesce() : a.destroy();
      const std::string said = testing::internal::GetCapturedStderr();
      EXPECT_EQ(arrays::counts().wait_notices, notices + 1);
      EXPECT_TRUE(contains(said, expected)) << said;
    } else {
      if (me() == last()) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      expected == in_quiesce ? arrays::quiesce() : a.destroy();
    }
  }
}

}  // namespace
