// SPDX-License-Identifier: BSD-3-Clause
// Every kind of index in a real array, on every node of the job (squallrun -n 1..8): 4-, 5-
// and 6-dimensional integers, bit paths, strings and a user struct of variable length.
// index_test checks their keys in one process; here their elements are inserted on every
// node, messaged from every node, migrated, messaged again and asked for their totals, so a
// key that decodes or hashes differently on another node, or after a hop, loses a message.
#include <gtest/gtest.h>

#include <squall/arrays.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace arrays = squall::arrays;

namespace {

int me() { return squall::node(); }
int nodes() { return squall::nodes(); }

// A user index of variable length: a name and a path of any length (hashed by its own member).
struct named_path {
  std::string name;
  std::vector<std::int64_t> path;
  // Required by array_index (std::regular); the runtime itself compares encoded keys.
  [[maybe_unused]] friend bool operator==(const named_path&, const named_path&) = default;
  std::size_t hash() const { return std::hash<std::string>{}(name) ^ (path.size() * 0x9e3779b97f4a7c15ULL); }
  template <class A>
  void serialize(A& ar) {
    ar(name, path);
  }
};

// Element i's index, distinct for every i, of each kind.
template <class I>
I index_of(int i);
template <>
arrays::index4d index_of<arrays::index4d>(int i) { return {i, -i, i * 7, 3}; }
template <>
arrays::index5d index_of<arrays::index5d>(int i) { return {0, i, 1, -i, i * i}; }
template <>
arrays::index6d index_of<arrays::index6d>(int i) { return {i, i, -1, i / 3, i % 3, 1 << 20}; }
template <>
std::string index_of<std::string>(int i) { return "element/" + std::to_string(i) + std::string(static_cast<std::size_t>(i % 5), '*'); }
template <>
arrays::bit_index index_of<arrays::bit_index>(int i) {
  // A quadtree path: i in its first three levels (i < 64), then i % 7 more levels, and 30 more
  // when i >= 32 (a path of two words).
  arrays::bit_index b;
  for (int shift = 4; shift >= 0; shift -= 2) b = b.child(static_cast<unsigned>(i >> shift) & 3, 2);
  for (int level = 0; level < i % 7 + (i >= 32 ? 30 : 0); ++level) b = b.child(static_cast<unsigned>(level % 4), 2);
  return b;
}
template <>
named_path index_of<named_path>(int i) {
  named_path p{"cell-" + std::to_string(i), {}};
  for (int j = 0; j < i % 6; ++j) p.path.push_back(i * 10 + j);
  return p;
}

template <class I>
struct Tally : arrays::element<I> {
  std::int64_t total = 0;
  int hops = 0;
  void add(std::int64_t x) { total += x; }
  void go(int to) { this->migrate_me(to); }
  void on_migrated() override { ++hops; }
  std::int64_t value() const { return total; }
  int where() const { return squall::node(); }
  template <class A>
  void serialize(A& ar) {
    ar(total, hops);
  }
};

template <class I>
class IndexKinds : public ::testing::Test {};
using Kinds = ::testing::Types<arrays::index4d, arrays::index5d, arrays::index6d, std::string, arrays::bit_index, named_path>;
TYPED_TEST_SUITE(IndexKinds, Kinds);

TYPED_TEST(IndexKinds, ElementsTakeMessagesFromEveryNodeBeforeAndAfterTheyMigrate) {
  using I = TypeParam;
  using T = Tally<I>;
  constexpr int n = 40;
  auto a = arrays::array<T, I>::create();
  // Node 0 inserts every element on a node of its choice, not its home.
  if (me() == 0)
    for (int i = 0; i < n; ++i) a.insert(index_of<I>(i), i % nodes());
  arrays::quiesce();
  EXPECT_EQ(squall::allreduce(a.local_count()), static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) a[index_of<I>(i)].template call<&T::add>(std::int64_t{me() + 1});
  arrays::quiesce();
  // Each element moves one node on; the messages sent right after chase it.
  if (me() == 0)
    for (int i = 0; i < n; ++i) a[index_of<I>(i)].template call<&T::go>((i + 1) % nodes());
  for (int i = 0; i < n; ++i) a[index_of<I>(i)].template call<&T::add>(std::int64_t{1000 * (me() + 1)});
  arrays::quiesce();

  std::vector<arrays::future<std::int64_t>> totals;
  std::vector<arrays::future<int>> places;
  if (me() == 0)
    for (int i = 0; i < n; ++i) {
      totals.push_back(a[index_of<I>(i)].template request<&T::value>());
      places.push_back(a[index_of<I>(i)].template request<&T::where>());
    }
  arrays::quiesce();
  const std::int64_t each = static_cast<std::int64_t>(nodes()) * (nodes() + 1) / 2;
  for (int i = 0; i < static_cast<int>(totals.size()); ++i) {
    EXPECT_EQ(totals[i].get(), 1001 * each) << "element " << i;
    EXPECT_EQ(places[i].get(), (i + 1) % nodes()) << "element " << i;
  }
  EXPECT_EQ(squall::allreduce(a.local_count()), static_cast<std::size_t>(n));
  a.destroy();
}

}  // namespace
