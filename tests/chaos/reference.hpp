// SPDX-License-Identifier: BSD-3-Clause
// Sequential truth for the CHAOS tests: random irregular distributions and reference patterns
// that every node computes identically from a common seed, so each node knows every node's
// part and checks its own results without asking the library under test.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <squall/chaos/schedule.hpp>
#include <squall/chaos/translation_table.hpp>
#include <squall/chaos/types.hpp>
#include <squall/squall.hpp>
#include <squall/stats.hpp>

namespace chaos_test {

using squall::chaos::index;

// splitmix64: the same stream on every node, whatever the standard library.
class rng {
 public:
  explicit rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  template <class T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }

 private:
  std::uint64_t s_;
};

// Test names for the two table modes.
inline std::string mode_name(const testing::TestParamInfo<squall::chaos::table_mode>& p) {
  return p.param == squall::chaos::table_mode::replicated ? "replicated" : "distributed";
}

inline int me() { return squall::node(); }
inline int nodes() { return squall::nodes(); }

// Where every element of [0, size) lives.
struct distribution {
  index size = 0;
  std::vector<int> owner;                 // of each global index
  std::vector<index> offset;              // its position in its owner's list
  std::vector<std::vector<index>> owned;  // each node's global indices, in local order

  std::span<const index> owned_by(int node) const { return owned[static_cast<std::size_t>(node)]; }
  int owner_of(index g) const { return owner[static_cast<std::size_t>(g)]; }
  index offset_of(index g) const { return offset[static_cast<std::size_t>(g)]; }
};

inline distribution from_owned_lists(index size, std::vector<std::vector<index>> owned) {
  distribution d;
  d.size = size;
  d.owner.assign(static_cast<std::size_t>(size), -1);
  d.offset.assign(static_cast<std::size_t>(size), -1);
  for (std::size_t p = 0; p < owned.size(); ++p) {
    for (std::size_t k = 0; k < owned[p].size(); ++k) {
      d.owner[static_cast<std::size_t>(owned[p][k])] = static_cast<int>(p);
      d.offset[static_cast<std::size_t>(owned[p][k])] = static_cast<index>(k);
    }
  }
  d.owned = std::move(owned);
  return d;
}

// Each element to a random node, each node's list in a random local order. With
// `last_node_empty`, node nodes-1 owns nothing (when there is more than one node).
inline distribution random_distribution(index size, int n, std::uint64_t seed, bool last_node_empty = false) {
  rng r(seed);
  const int holders = last_node_empty && n > 1 ? n - 1 : n;
  std::vector<std::vector<index>> owned(static_cast<std::size_t>(n));
  for (index g = 0; g < size; ++g) owned[r.below(static_cast<std::uint64_t>(holders))].push_back(g);
  for (auto& list : owned) r.shuffle(list);
  return from_owned_lists(size, std::move(owned));
}

// The layout translation_table::block documents: contiguous runs, the first size % n nodes
// one element more.
inline distribution block_distribution(index size, int n) {
  std::vector<std::vector<index>> owned(static_cast<std::size_t>(n));
  index g = 0;
  for (int p = 0; p < n; ++p) {
    const index count = size / n + (p < size % n ? 1 : 0);
    for (index k = 0; k < count; ++k) owned[static_cast<std::size_t>(p)].push_back(g++);
  }
  return from_owned_lists(size, std::move(owned));
}

// The value element g holds in the test arrays.
inline std::int64_t value_of(index g) { return g * 7919 + 13; }

enum class refs { mixed, local_only, all_remote };

// `count` global indices node `node` references. Mixed: half uniform over [0, size), half from a
// small hot set, so the same element is referenced many times. local_only: from the node's own
// elements; all_remote: from the others' (none when no other node owns anything).
inline std::vector<index> references(const distribution& d, int node, std::size_t count, refs kind,
                                     std::uint64_t seed) {
  rng r(seed * 1000003 + static_cast<std::uint64_t>(node) + 1);
  std::vector<index> pool;
  if (kind == refs::local_only) {
    pool.assign(d.owned_by(node).begin(), d.owned_by(node).end());
  } else if (kind == refs::all_remote) {
    for (index g = 0; g < d.size; ++g) {
      if (d.owner_of(g) != node) pool.push_back(g);
    }
  } else {
    for (index g = 0; g < d.size; ++g) pool.push_back(g);
  }
  std::vector<index> out;
  if (pool.empty()) return out;
  const std::size_t hot = std::min<std::size_t>(pool.size(), 40);
  for (std::size_t i = 0; i < count; ++i) {
    const bool from_hot = kind == refs::mixed && i % 2 == 1;
    out.push_back(pool[r.below(from_hot ? hot : pool.size())]);
  }
  return out;
}

// The distinct off-node elements among `arrays` of node `node`, ascending.
inline std::vector<index> off_node(const distribution& d, int node,
                                   std::initializer_list<std::span<const index>> arrays) {
  std::set<index> s;
  for (auto a : arrays) {
    for (index g : a) {
      if (d.owner_of(g) != node) s.insert(g);
    }
  }
  return {s.begin(), s.end()};
}

// The distinct owners of `elements` (other than node), ascending.
inline std::vector<int> owners_of(const distribution& d, int node, std::span<const index> elements) {
  std::set<int> s;
  for (index g : elements) {
    if (d.owner_of(g) != node) s.insert(d.owner_of(g));
  }
  return {s.begin(), s.end()};
}

// This node's part of a test array of ghost_end elements: owned elements hold value_of(global),
// the ghost area `fill`.
inline std::vector<std::int64_t> owned_values(const distribution& d, int node, index ghost_end,
                                              std::int64_t fill = -1) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(ghost_end), fill);
  const auto mine = d.owned_by(node);
  for (std::size_t k = 0; k < mine.size(); ++k) v[k] = value_of(mine[k]);
  return v;
}

// Checks element after element and reports the count of wrong ones and the first, instead of
// thousands of failures. check(i) returns an empty string when element i is right.
template <class F>
testing::AssertionResult every(std::size_t n, F check) {
  std::size_t bad = 0;
  std::string first;
  for (std::size_t i = 0; i < n; ++i) {
    std::string why = check(i);
    if (!why.empty() && bad++ == 0) first = std::move(why);
  }
  if (bad == 0) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "node " << me() << ": " << bad << " of " << n << " wrong; first: " << first;
}

inline std::string describe(std::size_t i, long long got, long long want) {
  if (got == want) return {};
  return "[" + std::to_string(i) + "] is " + std::to_string(got) + ", expected " + std::to_string(want);
}

// After a gather: localized[i] is a slot of `data` holding the value of original[i].
inline testing::AssertionResult reads_right_values(std::span<const std::int64_t> data, std::span<const index> localized,
                                                   std::span<const index> original) {
  if (localized.size() != original.size()) return testing::AssertionFailure() << "sizes differ";
  return every(localized.size(), [&](std::size_t i) -> std::string {
    const index slot = localized[i];
    if (slot < 0 || slot >= static_cast<index>(data.size())) {
      return "[" + std::to_string(i) + "] (element " + std::to_string(original[i]) + ") points at slot " +
             std::to_string(slot) + ", outside the " + std::to_string(data.size()) + " of the data array";
    }
    const auto got = data[static_cast<std::size_t>(slot)];
    if (got == value_of(original[i])) return {};
    return "[" + std::to_string(i) + "] (element " + std::to_string(original[i]) + ", slot " + std::to_string(slot) +
           ") reads " + std::to_string(got) + ", expected " + std::to_string(value_of(original[i]));
  });
}

// What one gather moves for node `node`, from every node's references (refs_of(p): all
// global indices node p's schedule was built from).
struct movement {
  int peers_sent_to = 0, peers_received_from = 0;
  index elements_sent = 0, elements_received = 0;
};
template <class F>
movement gather_truth(const distribution& d, int node, F refs_of) {
  movement m;
  for (int p = 0; p < static_cast<int>(d.owned.size()); ++p) {
    const std::vector<index> r = refs_of(p);
    const auto wanted = off_node(d, p, {std::span<const index>(r)});
    if (p == node) {
      m.elements_received = static_cast<index>(wanted.size());
      m.peers_received_from = static_cast<int>(owners_of(d, p, wanted).size());
      continue;
    }
    index from_me = 0;
    for (index g : wanted) from_me += d.owner_of(g) == node;
    m.elements_sent += from_me;
    m.peers_sent_to += from_me > 0;
  }
  return m;
}

template <class Figures>
testing::AssertionResult figures_match(const Figures& got, const movement& want) {
  if (got.peers_sent_to == want.peers_sent_to && got.peers_received_from == want.peers_received_from &&
      got.elements_sent == want.elements_sent && got.elements_received == want.elements_received) {
    return testing::AssertionSuccess();
  }
  return testing::AssertionFailure()
         << "node " << me() << ": figures (peers sent to, received from, elements sent, received) are ("
         << got.peers_sent_to << ", " << got.peers_received_from << ", " << got.elements_sent << ", "
         << got.elements_received << "), expected (" << want.peers_sent_to << ", " << want.peers_received_from << ", "
         << want.elements_sent << ", " << want.elements_received << ")";
}

// A counter of this node ("chaos.messages", ...).
inline std::uint64_t counter(std::string_view name) { return squall::stats::take().get(name); }

// How much a counter of this node grows over `phase`, with barriers on both sides so that the
// phase is over on every node (and every message it caused here has been counted).
template <class F>
std::uint64_t growth(std::string_view name, F phase) {
  squall::barrier();
  const std::uint64_t before = counter(name);
  phase();
  squall::barrier();
  return counter(name) - before;
}

// A schedule built from this node's references `refs_of(d, me())` on a random distribution,
// with the distribution, its table, and the original and localized references.
struct inspected {
  distribution d;
  squall::chaos::translation_table t;
  std::vector<index> original, localized;
  squall::chaos::schedule s;
};

template <class F>
inspected inspect_pattern(index size, std::uint64_t seed, F refs_of,
                          squall::chaos::table_mode mode = squall::chaos::table_mode::replicated, index page = 1024) {
  auto d = random_distribution(size, nodes(), seed);
  auto t = squall::chaos::translation_table(d.owned_by(me()), d.size, mode, page);
  auto original = refs_of(d, me());
  auto localized = original;
  auto s = squall::chaos::inspect(t, {std::span<index>(localized)});
  return {std::move(d), std::move(t), std::move(original), std::move(localized), std::move(s)};
}

// The same with `count` mixed references (local, remote, repeated).
inline inspected inspect_mixed(index size, std::size_t count, std::uint64_t seed,
                               squall::chaos::table_mode mode = squall::chaos::table_mode::replicated, index page = 1024) {
  return inspect_pattern(
      size, seed, [&](const distribution& d, int p) { return references(d, p, count, refs::mixed, seed); }, mode, page);
}

}  // namespace chaos_test
