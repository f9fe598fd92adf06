// SPDX-License-Identifier: BSD-3-Clause
// libarrays' misuse, on one node: each mistake ends in a clear squall::usage_error (or, for a
// message to an element that no longer exists, a report at quiescence), never a hang or a
// wrong answer. An index type that does not match the array's is refused at compile time
// (array<T, I> requires T to derive element<I>); a key whose bytes are not the index type is
// refused at run time (arrays_index_test).
#include <gtest/gtest.h>

#include <squall/arrays.hpp>
#include <squall/runtime.hpp>
#include <squall/stats.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace arrays = squall::arrays;

namespace {

void ignore(const int&) {}
std::vector<int> summed;
void got_sum(const std::vector<int>& v) { summed = v; }

struct Cell : arrays::element<arrays::index1d> {
  int value = 0;
  void set(int v) { value = v; }
  int get() const { return value; }
  void sum_it() { contribute(value, arrays::sum<int>(), arrays::on_root<&ignore>()); }
  void max_it() { contribute(value, arrays::max<int>(), arrays::on_root<&ignore>()); }
  void sum_vector(int length) {
    contribute(std::vector<int>(static_cast<std::size_t>(length), value), arrays::sum<std::vector<int>>(),
               arrays::on_root<&got_sum>());
  }
  void go(int to) { migrate_me(to); }
  void load(double seconds) { add_load(seconds); }
  void wait_inside() { arrays::quiesce(); }
  template <class A>
  void serialize(A& ar) {
    ar(value);
  }
};

// Runs the scheduler until it throws; returns the message (empty if nothing was thrown).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
    arrays::quiesce();
  } catch (const squall::usage_error& e) {
    return e.what();
  }
  return {};
}

// First, before any test creates an array. The probe's: quiesce, checkpoint and restart
// before the node created any array said "from a thread other than the one that created the
// node's first array", on the very thread that would create it.
TEST(ArraysErrors, WaitingBeforeAnyArrayIsCreatedSaysSo) {
  for (const auto& [call, name] : std::vector<std::pair<std::function<void()>, std::string>>{
           {[] { arrays::quiesce(); }, "quiesce"},
           {[] { arrays::checkpoint("unused-checkpoint-dir"); }, "checkpoint"},
           {[] { arrays::restart("unused-checkpoint-dir"); }, "restart"},
           {[] { arrays::run_until([] { return true; }); }, "run_until"}}) {
    std::string what;
    try {
      call();
    } catch (const squall::usage_error& e) {
      what = e.what();
    }
    EXPECT_NE(what.find("libarrays: " + name), std::string::npos) << what;
    EXPECT_NE(what.find("before this node created any array"), std::string::npos) << what;
    EXPECT_EQ(what.find("thread other than"), std::string::npos) << what;
  }
}

TEST(ArraysErrors, TwoReducersInOneReductionAreRefused) {
  auto a = arrays::array<Cell>::create();
  a.insert(0);
  a.insert(1);
  arrays::quiesce();
  const std::string what = error_of([&] {
    a[0].call<&Cell::sum_it>();
    a[1].call<&Cell::max_it>();
  });
  EXPECT_NE(what.find("two reducers"), std::string::npos) << what;
}

// The probe's: the vectors were added up to the shorter length of each pair, and the result's
// length was that of whichever came first.
TEST(ArraysErrors, VectorsOfDifferentLengthsInOneSumAreRefused) {
  auto a = arrays::array<Cell>::create();
  a.insert(20);
  a.insert(21);
  arrays::quiesce();
  a[20].call<&Cell::set>(1);
  a[21].call<&Cell::set>(10);
  a[20].call<&Cell::sum_vector>(3);
  a[21].call<&Cell::sum_vector>(3);
  arrays::quiesce();
  EXPECT_EQ(summed, (std::vector<int>{11, 11, 11}));  // the same lengths: element by element
  summed.clear();
  const std::string what = error_of([&] {
    a[20].call<&Cell::sum_vector>(2);
    a[21].call<&Cell::sum_vector>(3);
  });
  EXPECT_TRUE(what.find("a sum was given vectors of 2 and 3 values") != std::string::npos ||
              what.find("a sum was given vectors of 3 and 2 values") != std::string::npos)
      << what;
  EXPECT_TRUE(summed.empty()) << summed.size() << " values summed";
}

TEST(ArraysErrors, InsertingAnIndexTwiceIsRefused) {
  auto a = arrays::array<Cell>::create();
  a.insert(4);
  arrays::quiesce();
  const std::string what = error_of([&] { a.insert(4); });
  EXPECT_NE(what.find("already exists"), std::string::npos) << what;
}

TEST(ArraysErrors, MigratingToANodeOutsideTheJobIsRefused) {
  auto a = arrays::array<Cell>::create();
  a.insert(2);
  arrays::quiesce();
  const std::string what = error_of([&] { a[2].call<&Cell::go>(squall::nodes() + 3); });
  EXPECT_NE(what.find("migrate_me"), std::string::npos) << what;
}

// The probe's: NaN, an infinity or a negative load was taken, and at_sync then reported
// "avg nan" and "max_before 0" without complaint.
TEST(ArraysErrors, ALoadThatIsNotAFiniteNumberOfSecondsIsRefused) {
  auto a = arrays::array<Cell>::create();
  a.insert(6);
  arrays::quiesce();
  for (const auto& refused : std::vector<std::pair<double, std::string>>{
           {std::nan(""), "nan"}, {std::numeric_limits<double>::infinity(), "inf"}, {-1e9, "-1e+09"}}) {
    const double load = refused.first;  // a plain variable: clang 14 cannot capture a binding
    const std::string& text = refused.second;
    const std::string what = error_of([&] { a[6].call<&Cell::load>(load); });
    EXPECT_NE(what.find("add_load(" + text + ") by element (6) of array"), std::string::npos) << what;
  }
  a[6].call<&Cell::load>(0.5);  // a finite one, 0 or more, is taken
  arrays::quiesce();
  a.for_each_local([](Cell& c) { EXPECT_EQ(c.measured_load(), 0.5); });
}

TEST(ArraysErrors, WaitingInsideAnEntryMethodIsRefused) {
  auto a = arrays::array<Cell>::create();
  a.insert(3);
  arrays::quiesce();
  const std::string what = error_of([&] { a[3].call<&Cell::wait_inside>(); });
  EXPECT_NE(what.find("inside an entry method"), std::string::npos) << what;
}

// for_each_local visits the elements in place: a visit that ran the scheduler (get, quiesce,
// destroy) could delete them under it; a destroy() there was a segmentation fault.
TEST(ArraysErrors, WaitingInsideForEachLocalIsRefused) {
  auto a = arrays::array<Cell>::create();
  for (int i = 0; i < 8; ++i) a.insert(i);
  arrays::quiesce();
  const std::string destroy = error_of([&] { a.for_each_local([&](Cell&) { a.destroy(); }); });
  EXPECT_NE(destroy.find("libarrays: array::destroy inside for_each_local"), std::string::npos) << destroy;
  const std::string get = error_of([&] { a.for_each_local([&](Cell& c) { (void)a[c.this_index()].request<&Cell::get>().get(); }); });
  EXPECT_NE(get.find("inside for_each_local"), std::string::npos) << get;
  EXPECT_EQ(a.local_count(), 8u);
  a.destroy();
}

TEST(ArraysErrors, AMessageToADeletedElementIsReportedAtQuiescence) {
  auto a = arrays::array<Cell>::create();
  a.insert(9);
  arrays::quiesce();
  a[9].destroy();
  arrays::quiesce();
  const auto before = squall::stats::take().get("arrays.held_at_quiescence");
  testing::internal::CaptureStderr();
  a[9].call<&Cell::set>(1);
  arrays::quiesce();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(squall::stats::take().get("arrays.held_at_quiescence") - before, 1u);
  EXPECT_NE(err.find("do not exist"), std::string::npos) << err;
  EXPECT_NE(err.find("the first for element (9) of array " + std::to_string(a.id())), std::string::npos) << err;
}

TEST(ArraysErrors, ARequestToAnElementThatDoesNotExistFailsAtQuiescence) {
  auto a = arrays::array<Cell>::create();
  testing::internal::CaptureStderr();
  auto f = a[12].request<&Cell::get>();
  arrays::quiesce();  // held at the home until now: then answered with an error
  testing::internal::GetCapturedStderr();
  ASSERT_TRUE(f.ready());
  try {
    f.get();
    ADD_FAILURE() << "get() returned for an element that does not exist";
  } catch (const squall::usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

// The probe's: the second get() waited for ever for a result already taken.
TEST(ArraysErrors, TakingAFuturesResultTwiceIsRefused) {
  auto a = arrays::array<Cell>::create();
  a.insert(13);
  arrays::quiesce();
  a[13].call<&Cell::set>(7);
  auto f = a[13].request<&Cell::get>();
  auto copy = f;
  EXPECT_EQ(f.get(), 7);
  const std::string what = error_of([&] { copy.get(); });
  EXPECT_NE(what.find("taken twice"), std::string::npos) << what;
  EXPECT_NE(error_of([&] { f.get(); }).find("taken twice"), std::string::npos);
}

// The probe's: get() waited for ever, since only a quiesce answered the request.
TEST(ArraysErrors, GetOnAnIndexNeverInsertedFailsAtOnceOnOneNode) {
  auto a = arrays::array<Cell>::create();
  a.insert(14);
  arrays::quiesce();
  auto f = a[15].request<&Cell::get>();
  const std::string what = error_of([&] { f.get(); });
  EXPECT_NE(what.find("element (15) of array " + std::to_string(a.id()) + ", which does not exist"), std::string::npos)
      << what;
  const auto invoked = arrays::counts().invoked;
  a.insert(15);  // the failed request is gone, not run when the element comes
  arrays::quiesce();
  EXPECT_EQ(arrays::counts().invoked, invoked);
  EXPECT_EQ(a[15].request<&Cell::get>().get(), 0);
}

TEST(ArraysErrors, TheSchedulerRunsOnlyOnTheThreadThatCreatedTheArrays) {
  [[maybe_unused]] auto a = arrays::array<Cell>::create();
  std::string what;
  std::thread t([&] {
    try {
      arrays::quiesce();
    } catch (const squall::usage_error& e) {
      what = e.what();
    }
  });
  t.join();
  EXPECT_NE(what.find("thread other than"), std::string::npos) << what;
}

// The probe's: two threads sending at once corrupted the node's tables (a segmentation
// fault, no message); one thread other than the program's went unnoticed.
TEST(ArraysErrors, SendingFromAnotherThreadIsRefused) {
  auto a = arrays::array<Cell>::create();
  a.insert(30);
  arrays::quiesce();
  std::vector<std::string> what;
  std::thread t([&] {
    const auto refused = [&](auto&& f) {
      try {
        f();
        what.emplace_back();
      } catch (const squall::usage_error& e) {
        what.emplace_back(e.what());
      }
    };
    refused([&] { a[30].call<&Cell::set>(1); });
    refused([&] { a.insert(31); });
    refused([&] { a.broadcast<&Cell::set>(2); });
    refused([&] { (void)a.local_count(); });
  });
  t.join();
  ASSERT_EQ(what.size(), 4u);
  for (const std::string& w : what) EXPECT_NE(w.find("thread other than"), std::string::npos) << w;
  arrays::quiesce();
  EXPECT_EQ(a[30].request<&Cell::get>().get(), 0);  // nothing of the other thread's arrived
  EXPECT_EQ(a.local_count(), 1u);
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  squall::runtime rt(&argc, &argv);
  return RUN_ALL_TESTS();
}
