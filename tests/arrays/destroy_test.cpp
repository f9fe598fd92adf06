// SPDX-License-Identifier: BSD-3-Clause
// array::destroy(), collective: messages already sent are delivered first; then every element
// of the array, on every node, is deleted (its destructor runs once), and the array is
// forgotten: its proxies throw, quiesce skips it, checkpoint() and restart() see only the
// arrays left. Run on 1, 2, 4 and 8 nodes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <squall/arrays.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>

#include <cstdint>
#include <filesystem>
#include <string>

namespace arrays = squall::arrays;

namespace {

int me() { return squall::node(); }
int nodes() { return squall::nodes(); }

std::uint64_t destructed = 0;  // on this node, while `counting`
bool counting = false;
std::uint64_t pokes_here = 0;  // pokes run on this node

struct Cell : arrays::element<arrays::index1d> {
  std::int64_t value = 0;
  Cell() = default;
  ~Cell() override {
    if (counting) ++destructed;
  }
  void set(std::int64_t v) { value = v; }
  void poke() { ++pokes_here; }
  std::int64_t get() { return value; }
  template <class A>
  void serialize(A& ar) {
    ar(value);
  }
};

std::string usage_error_of(auto&& f) {
  try {
    f();
  } catch (const squall::usage_error& e) {
    return e.what();
  }
  return "";
}

std::uint64_t sum_over_nodes(std::uint64_t mine) { return squall::allreduce(mine, squall::op::sum{}); }

// Fills `a` with `n` elements spread over the nodes, destroys it, and checks that each
// element's destructor ran once, somewhere.
void expect_destroy_deletes_each_once(const arrays::array<Cell>& a, int n) {
  if (me() == 0)
    for (int i = 0; i < n; ++i) a.insert(i, i % nodes());
  arrays::quiesce();
  destructed = 0;
  counting = true;
  a.destroy();
  counting = false;
  EXPECT_EQ(sum_over_nodes(destructed), static_cast<std::uint64_t>(n));
}

TEST(ArraysDestroy, EveryElementIsDeletedOnceAndTheArrayIsForgotten) {
  auto a = arrays::array<Cell>::create();
  expect_destroy_deletes_each_once(a, 16 * nodes());
  const std::string was_destroyed = "array " + std::to_string(a.id()) + " was destroyed";
  EXPECT_NE(usage_error_of([&] { a[3].call<&Cell::poke>(); }).find(was_destroyed), std::string::npos);
  EXPECT_NE(usage_error_of([&] { (void)a.local_count(); }).find(was_destroyed), std::string::npos);
  EXPECT_NE(usage_error_of([&] { a.destroy(); }).find(was_destroyed), std::string::npos);  // on every node alike
  arrays::quiesce();  // and the job goes on
}

TEST(ArraysDestroy, MessagesSentBeforeDestroyAreDeliveredFirst) {
  auto a = arrays::array<Cell>::create();
  const int n = 4 * nodes();
  if (me() == 0)
    for (int i = 0; i < n; ++i) a.insert(i, (i + 1) % nodes());
  arrays::quiesce();
  pokes_here = 0;
  constexpr int per_node = 200;
  for (int i = 0; i < per_node; ++i) a[(i * 7 + me()) % n].call<&Cell::poke>();
  a.destroy();  // no quiesce before it: destroy's own delivers them
  EXPECT_EQ(sum_over_nodes(pokes_here), static_cast<std::uint64_t>(per_node * nodes()));
}

TEST(ArraysDestroy, OtherArraysAndManyCreatedAndDestroyedOnesWorkOn) {
  auto keep = arrays::array<Cell>::create();
  if (me() == 0) keep.insert(1, nodes() - 1);
  for (int round = 0; round < 200; ++round) {
    auto t = arrays::array<Cell>::create();
    if (me() == 0) t.insert(round, round % nodes());
    if (me() == 0) t[round].call<&Cell::set>(std::int64_t{round});
    t.destroy();
  }
  if (me() == 0) keep[1].call<&Cell::set>(std::int64_t{42});
  arrays::quiesce();
  if (me() == 0) {
    EXPECT_EQ(keep[1].request<&Cell::get>().get(), 42);
  }
  arrays::quiesce();
  keep.destroy();
}

// An element's destructor may ask which array it belongs to, as it may when destroy_me()
// deletes it alone: destroy() deleted the elements' slots first, and array_id() read freed
// memory (a segmentation fault on 1 and 2 nodes).
std::uint32_t destroyed_array = 0;
std::uint64_t saw_its_array = 0;
struct AsksItsArray : arrays::element<arrays::index1d> {
  ~AsksItsArray() override {
    if (counting && array_id() == destroyed_array) ++saw_its_array;
  }
  template <class A>
  void serialize(A&) {}
};

TEST(ArraysDestroy, AnElementsDestructorStillKnowsItsArray) {
  auto a = arrays::array<AsksItsArray>::create();
  const int n = 8 * nodes();
  if (me() == 0)
    for (int i = 0; i < n; ++i) a.insert(i, i % nodes());
  arrays::quiesce();
  destroyed_array = a.id();
  saw_its_array = 0;
  counting = true;
  a.destroy();
  counting = false;
  EXPECT_EQ(sum_over_nodes(saw_its_array), static_cast<std::uint64_t>(n));
}

// destroy() called by some nodes only, the others quiescing, or nodes destroying different
// arrays: the quiesces paired up and each node deleted what it chose, in silence, and a later
// message to the array ended a quiesce with "array N was destroyed". Now every node throws,
// nothing is destroyed, and the nodes go on in step.
std::string destroy_or_quiesce(arrays::array<Cell>& a, bool destroy) {
  return usage_error_of([&] {
    if (destroy) {
      a.destroy();
    } else {
      arrays::quiesce();
    }
  });
}

TEST(ArraysDestroy, NodesThatDisagreeAllThrowAndNothingIsDestroyed) {
  if (nodes() < 2) GTEST_SKIP() << "one node always agrees with itself";
  auto a = arrays::array<Cell>::create();
  auto b = arrays::array<Cell>::create();
  if (me() == 0) a.insert(1, nodes() - 1);
  const std::string only_node_0 = destroy_or_quiesce(a, me() == 0);
  EXPECT_NE(only_node_0.find("array::destroy() on 1 of " + std::to_string(nodes()) + " nodes"), std::string::npos)
      << only_node_0;
  const std::string different = usage_error_of([&] { (me() == 0 ? a : b).destroy(); });
  EXPECT_NE(different.find("the nodes destroy different arrays"), std::string::npos) << different;
  if (me() == 0) a[1].call<&Cell::set>(std::int64_t{5});  // a lives on, on every node
  arrays::quiesce();
  if (me() == 0) {
    EXPECT_EQ(a[1].request<&Cell::get>().get(), 5);
  }
  a.destroy();
  b.destroy();
}

// A reduction whose callback goes to an array destroyed meanwhile: quiesce failed with only
// "array N was destroyed", which named neither the reduction nor its array; and to_all() of
// a destroyed array made a callback without a word. Now both say what they are.
struct Contributor : arrays::element<arrays::index1d> {
  void give(const arrays::callback& then) { contribute(std::int64_t{1}, arrays::sum<std::int64_t>(), then); }
  template <class A>
  void serialize(A&) {}
};

std::string quiesce_failure() {
  try {
    arrays::quiesce();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(ArraysDestroy, AReductionIntoADestroyedArraySaysSo) {
  auto a = arrays::array<Cell>::create();
  auto b = arrays::array<Contributor>::create();
  if (me() == 0) {
    a.insert(0);
    b.insert(0, 0);
    b.insert(1, nodes() - 1);
  }
  arrays::quiesce();
  const arrays::callback into_a = a.to_element<&Cell::set>(0);
  if (me() == 0) b[0].call<&Contributor::give>(into_a);
  a.destroy();  // b's reduction waits for its element 1
  if (me() == 0) b[1].call<&Contributor::give>(into_a);
  const std::string failed = quiesce_failure();
  EXPECT_NE(failed.find("libarrays: a reduction of array " + std::to_string(b.id()) + " ends in a callback to array " +
                        std::to_string(a.id()) + ", which was destroyed"),
            std::string::npos)
      << failed;
  EXPECT_NE(usage_error_of([&] { (void)a.to_all<&Cell::set>(); }).find("array " + std::to_string(a.id()) + " was destroyed"),
            std::string::npos);
  b.destroy();
}

TEST(ArraysDestroy, AnInPlaceArraysElementsAreDeletedToo) {
  expect_destroy_deletes_each_once(arrays::array<Cell>::create_in_place({.slot_bytes = 4096, .slots_per_node = 64}),
                                   8 * nodes());
}

// Each in-place array holds a segment of the shared address space, which destroy() gives
// back: more than the substrate's 1023 live segments are created over the job.
TEST(ArraysDestroy, AnInPlaceArrayGivesItsSegmentBack) {
  for (int round = 0; round < 1100; ++round) {
    auto a = arrays::array<Cell>::create_in_place({.slot_bytes = 4096, .slots_per_node = 4});
    if (me() == 0) a.insert(1, round % nodes());
    a.destroy();
  }
}

// A checkpoint holds the arrays not destroyed, in creation order; a restart fills the same
// live arrays, however many were created and destroyed before them.
TEST(ArraysDestroy, CheckpointAndRestartSeeOnlyTheArraysLeft) {
  int pid = me() == 0 ? static_cast<int>(getpid()) : 0;
  squall::broadcast(pid);
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("squall-destroy-test-" + std::to_string(pid))).string();
  auto gone = arrays::array<Cell>::create();
  auto kept = arrays::array<Cell>::create();
  const int n = 6 * nodes();
  if (me() == 0) {
    for (int i = 0; i < n; ++i) {
      gone.insert(i);
      kept.insert(i);
      kept[i].call<&Cell::set>(std::int64_t{100 + i});
    }
  }
  gone.destroy();
  arrays::checkpoint(dir);
  kept.destroy();
  auto again = arrays::array<Cell>::create();  // the only live array, as kept was
  arrays::restart(dir);
  if (me() == 0) {
    for (int i = 0; i < n; ++i) EXPECT_EQ(again[i].request<&Cell::get>().get(), 100 + i) << i;
  }
  arrays::quiesce();
  again.destroy();
  squall::barrier();
  if (me() == 0) std::filesystem::remove_all(dir);
}

}  // namespace
