// SPDX-License-Identifier: BSD-3-Clause
// The node's element table (libarrays/src/element_table.hpp) against std::map under a random
// mix of additions, lookups and removals: every lookup agrees, records never move while they
// exist, and iteration order is a function of the operations alone.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "element_table.hpp"

namespace {

using squall::arrays::key;
using squall::arrays::detail::element_table;

struct record {
  key k;
  int value = 0;
};

// Keys of every length up to 40 bytes that differ only in one byte, so that equal lengths,
// equal prefixes and equal suffixes all occur.
std::string key_bytes(int n) {
  const std::size_t length = static_cast<std::size_t>(n % 41);
  std::string b(length, 'x');
  if (length > 0) b[static_cast<std::size_t>(n / 41) % length] = static_cast<char>('a' + n % 26);
  return b;
}

void run(element_table<record>& table, std::vector<std::string>* order, unsigned seed) {
  std::mt19937 random(seed);
  std::map<std::string, std::pair<int, record*>> model;
  for (int step = 0; step < 40000; ++step) {
    const std::string b = key_bytes(static_cast<int>(random() % 3000));
    const key k(b);
    auto it = model.find(b);
    switch (random() % 4) {
      case 0:
      case 1: {  // find_or_add
        auto [r, added] = table.find_or_add(k.hash(), b, [&] { return k; });
        ASSERT_EQ(added, it == model.end()) << "step " << step;
        if (added) {
          r->value = step;
          model[b] = {step, r};
        } else {
          ASSERT_EQ(r, it->second.second) << "a record moved";
          ASSERT_EQ(r->value, it->second.first);
        }
        break;
      }
      case 2:  // find
        ASSERT_EQ(table.find(k), it == model.end() ? nullptr : it->second.second) << "step " << step;
        break;
      case 3:  // erase
        if (it != model.end()) {
          table.erase(*it->second.second);
          model.erase(it);
          ASSERT_EQ(table.find(k), nullptr);
        }
        break;
    }
    ASSERT_EQ(table.size(), model.size());
  }
  for (const auto& [b, v] : model) ASSERT_EQ(table.find(key(b)), v.second);
  // erase_if takes exactly what it is asked to.
  const std::size_t odd = table.erase_if([](const record& r) { return r.value % 2 != 0; });
  std::size_t expected_odd = 0;
  for (const auto& [b, v] : model) expected_odd += v.first % 2 != 0 ? 1 : 0;
  EXPECT_EQ(odd, expected_odd);
  for (const auto& [b, v] : model) EXPECT_EQ(table.find(key(b)) != nullptr, v.first % 2 == 0);
  table.for_each([order](const record& r) { order->push_back(r.k.bytes()); });
}

TEST(ElementTable, AgreesWithAMapAndKeepsRecordsInPlace) {
  element_table<record> table;
  std::vector<std::string> order;
  run(table, &order, 7);
  EXPECT_EQ(order.size(), table.size());
}

TEST(ElementTable, IterationOrderDependsOnTheOperationsOnly) {
  // Two tables at different addresses, one heap state apart, fed the same operations.
  std::vector<std::string> first, second;
  element_table<record> a;
  run(a, &first, 11);
  std::vector<int> spacer(1000);
  element_table<record> b;
  run(b, &second, 11);
  EXPECT_EQ(first, second);
}

TEST(ElementTable, RecordsAddedDuringIterationAreNotVisited) {
  // An entry method run for each element may send, which adds records: the vector of
  // records may grow under the iteration.
  element_table<record> table;
  const auto add = [&table](int i) {
    const std::string b = "element " + std::to_string(i);
    table.find_or_add(key(b).hash(), b, [&b] { return key(b); });
  };
  for (int i = 0; i < 8; ++i) add(i);
  int visited = 0, added = 100;
  table.for_each([&](record&) {
    ++visited;
    for (int j = 0; j < 50; ++j) add(added++);
  });
  EXPECT_EQ(visited, 8);
  EXPECT_EQ(table.size(), 8u + 400u);
}

// The record kept at hand is found by its bytes only, not another key's, and is forgotten
// when erased (a dangling one would be found again by a new record's key).
TEST(ElementTable, TheRecordAtHandIsForgottenWhenErased) {
  element_table<record> table;
  const auto add = [&table](const std::string& b) {
    return table.find_or_add(key(b).hash(), b, [&b] { return key(b); }).first;
  };
  record* a = add("abcd");
  record* b = add("abce");
  EXPECT_EQ(table.at_hand("abcd"), nullptr);
  table.keep_at_hand(*a);
  EXPECT_EQ(table.at_hand("abcd"), a);
  EXPECT_EQ(table.at_hand("abce"), nullptr);
  table.erase(*b);
  EXPECT_EQ(table.at_hand("abcd"), a);
  table.erase(*a);
  EXPECT_EQ(table.at_hand("abcd"), nullptr);
  add("abcd");
  EXPECT_EQ(table.at_hand("abcd"), nullptr);
}

}  // namespace
