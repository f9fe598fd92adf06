// SPDX-License-Identifier: BSD-3-Clause
// Arrays created in place: an element and its heap live in a slot of the shared address
// space and keep their addresses when they migrate, so pointers into them stay valid; the
// messages that chase them still arrive exactly once; deleted elements give their slots back.
#include <gtest/gtest.h>

#include <squall/arrays.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>

#include <cstdint>
#include <memory_resource>
#include <vector>

namespace arrays = squall::arrays;

namespace in_place_test {

int me() { return squall::node(); }
int nodes() { return squall::nodes(); }

struct Body : arrays::element<arrays::index1d> {
  std::pmr::vector<double> data{&heap()};
  const Body* self = this;      // where it was born
  const double* first = nullptr;  // into its own heap
  int received = 0;
  int moved_ok = 0;  // arrivals that found every pointer as it was

  void fill(int n) {
    data.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) data[static_cast<std::size_t>(i)] = this_index()[0] * 1000.0 + i;
    first = data.data();
  }
  void hop(int to, std::int64_t) {
    ++received;
    migrate_me(to);
  }
  void on_migrated() override {
    bool ok = self == this && first == data.data() && data.get_allocator().resource() == &heap();
    for (std::size_t i = 0; i < data.size(); ++i) ok = ok && data[i] == this_index()[0] * 1000.0 + static_cast<double>(i);
    moved_ok += ok ? 1 : 0;
  }
  std::int64_t where_and_how() const { return (static_cast<std::int64_t>(squall::node()) << 32) | (received << 16) | moved_ok; }
  void die() { destroy_me(); }
  template <class A>
  void serialize(A& ar) {
    ar(data, received, moved_ok);
  }
};

TEST(ArraysInPlace, ElementsKeepTheirAddressesAndPointersAcrossMigrations) {
  auto a = arrays::array<Body>::create_in_place({.slot_bytes = 16384, .slots_per_node = 64});
  constexpr int n = 12, hops = 5;
  if (me() == 0)
    for (int i = 0; i < n; ++i) a.insert(i, i % nodes());
  arrays::quiesce();
  if (me() == 0) a.broadcast<&Body::fill>(500);  // 4 KB of heap each, in the slot's arena
  arrays::quiesce();
  for (int h = 0; h < hops; ++h) {
    if (me() == 0)
      for (int i = 0; i < n; ++i) a[i].call<&Body::hop>((i + h + 1) % nodes(), std::int64_t{h});
    arrays::quiesce();
  }
  std::vector<arrays::future<std::int64_t>> f;
  if (me() == 0)
    for (int i = 0; i < n; ++i) f.push_back(a[i].request<&Body::where_and_how>());
  arrays::quiesce();
  for (int i = 0; i < static_cast<int>(f.size()); ++i) {
    const std::int64_t v = f[static_cast<std::size_t>(i)].get();
    EXPECT_EQ(v >> 32, (i + hops) % nodes()) << i;
    EXPECT_EQ((v >> 16) & 0xffff, hops) << i;  // every hop's message, once
    // Every arrival on another node found its pointers unchanged.
    if (nodes() > 1) {
      EXPECT_EQ(v & 0xffff, hops) << i;
    }
  }
}

TEST(ArraysInPlace, DeletedElementsGiveTheirSlotsBack) {
  // Two slots per node: creating, moving and deleting far more elements than that only works
  // if each deleted element's slot returns to the node that handed it out.
  auto a = arrays::array<Body>::create_in_place({.slot_bytes = 4096, .slots_per_node = 2});
  for (int round = 0; round < 10; ++round) {
    const int i = round * nodes() + me();
    a.insert(i, me());
    arrays::quiesce();
    a[i].call<&Body::hop>((me() + 1) % nodes(), std::int64_t{0});
    arrays::quiesce();
    a[i].call<&Body::die>();
    arrays::quiesce();
  }
  EXPECT_EQ(squall::allreduce(a.local_count()), 0u);
}

TEST(ArraysInPlace, AHeapLargerThanTheSlotIsAClearError) {
  auto a = arrays::array<Body>::create_in_place({.slot_bytes = 4096, .slots_per_node = 4});
  if (me() == 0) a.insert(0, 0);
  arrays::quiesce();
  // The element is on node 0, so the error is thrown there, out of node 0's scheduler.
  if (me() == 0) {
    std::string what;
    try {
      a[0].call<&Body::fill>(100000);
      arrays::run_until([] { return false; });
    } catch (const squall::usage_error& e) {
      what = e.what();
    }
    EXPECT_NE(what.find("outgrew its slot"), std::string::npos) << what;
  }
  arrays::quiesce();
}

}  // namespace in_place_test
