// SPDX-License-Identifier: BSD-3-Clause
// Indices and their keys (squall/arrays/index.hpp, key.hpp): equal indices give equal keys,
// distinct indices distinct keys, and every kind of index comes back from its key.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include <squall/arrays/key.hpp>

namespace {

// squall::arrays::index is named in full below: POSIX's index() from <strings.h> makes the
// bare name ambiguous under this using-directive.
using namespace squall::arrays;

// A user index of variable length: a word and a path of any length.
struct user_index {
  std::string word;
  std::vector<std::int64_t> path;

  friend bool operator==(const user_index&, const user_index&) = default;
  std::size_t hash() const { return std::hash<std::string>{}(word) ^ path.size(); }
  template <class A>
  void serialize(A& ar) {
    ar(word, path);
  }
};

// A user_index's first field alone.
struct word_only {
  std::string word;
  bool operator==(const word_only&) const = default;
  std::size_t hash() const { return std::hash<std::string>{}(word); }
  template <class A>
  void serialize(A& ar) {
    ar(word);
  }
};

struct no_hash {
  int v = 0;
  bool operator==(const no_hash&) const = default;
  template <class A>
  void serialize(A& ar) {
    ar(v);
  }
};
struct no_serialize {
  int v = 0;
  bool operator==(const no_serialize&) const = default;
  std::size_t hash() const { return static_cast<std::size_t>(v); }
};

static_assert(array_index<index1d> && array_index<index6d>);
static_assert(array_index<bit_index>);
static_assert(array_index<std::string>);
static_assert(array_index<user_index>);
static_assert(!array_index<no_hash>);
static_assert(!array_index<no_serialize>);

// Every index<N> with coordinates in {-1, 0, 1, 2}, so that the signs and zeros are in play.
template <int N>
std::vector<squall::arrays::index<N>> small_indices() {
  std::vector<squall::arrays::index<N>> all;
  int total = 1;
  for (int d = 0; d < N; ++d) total *= 4;
  for (int k = 0; k < total; ++k) {
    squall::arrays::index<N> i;
    for (int d = 0, rest = k; d < N; ++d, rest /= 4) i[d] = rest % 4 - 1;
    all.push_back(i);
  }
  return all;
}

// Distinct indices, distinct keys; a copy the same key; each comes back from its key.
template <class I>
void expect_keys_canonical(const std::vector<I>& distinct) {
  std::unordered_set<key> keys;
  for (const I& i : distinct) {
    key k = key_of(i);
    I copy = i;
    EXPECT_EQ(key_of(copy), k);
    EXPECT_EQ(std::hash<key>{}(key_of(copy)), k.hash());
    EXPECT_TRUE(index_of<I>(k) == i);
    keys.insert(k);
  }
  EXPECT_EQ(keys.size(), distinct.size());
}

template <int N>
void expect_index_canonical() {
  SCOPED_TRACE(N);
  expect_keys_canonical(small_indices<N>());
  EXPECT_EQ(key_of(squall::arrays::index<N>()).bytes().size(), 4u * N);
}

TEST(Index, IntegerIndicesOneToSixDimensions) {
  expect_index_canonical<1>();
  expect_index_canonical<2>();
  expect_index_canonical<3>();
  expect_index_canonical<4>();
  expect_index_canonical<5>();
  expect_index_canonical<6>();
  index3d i{1, -2, 3};
  EXPECT_EQ(i[0], 1);
  EXPECT_EQ(i[1], -2);
  EXPECT_EQ(i.at[2], 3);
  EXPECT_EQ(index_of<index3d>(key_of(index3d{7, 8, 9})), (index3d{7, 8, 9}));
  index1d seven = 7;  // one integer converts
  EXPECT_EQ(index_of<index1d>(key_of(seven))[0], 7);
}

// The paper's quadtree: "10;11" is lower-left, then its lower-right.
TEST(Index, BitIndexIsAQuadtreePath) {
  bit_index root;
  bit_index leaf = root.child(0b10, 2).child(0b11, 2);
  EXPECT_EQ(leaf.bits, 4u);
  EXPECT_EQ(leaf.depth(2), 2u);
  EXPECT_EQ(leaf.step(0, 2), 0b10u);
  EXPECT_EQ(leaf.step(1, 2), 0b11u);
  EXPECT_TRUE(leaf.bit(0));
  EXPECT_FALSE(leaf.bit(1));
  EXPECT_EQ(leaf.parent(2), root.child(0b10, 2));
  EXPECT_EQ(leaf.parent(4), root);
  EXPECT_THROW(leaf.parent(5), squall::usage_error);
  EXPECT_THROW(root.child(4, 2), squall::usage_error);
  EXPECT_THROW(root.child(0, 0), squall::usage_error);
  EXPECT_THROW(leaf.bit(4), squall::usage_error);
}

TEST(Index, BitIndexCrossesWordsAndStaysCanonical) {
  bit_index deep;
  for (int level = 0; level < 50; ++level) deep = deep.child(static_cast<unsigned>(level % 4), 2);
  EXPECT_EQ(deep.bits, 100u);
  EXPECT_EQ(deep.words.size(), 2u);
  for (std::uint32_t level = 0; level < 50; ++level) EXPECT_EQ(deep.step(level, 2), level % 4);
  // Up and down again gives the same words: the dropped bits were cleared.
  bit_index back = deep.parent(40).child(0xFFFFF, 20).parent(20).child(0, 20).child(0, 20);
  bit_index direct = deep.parent(40).child(0, 20).child(0, 20);
  EXPECT_EQ(back, direct);
  EXPECT_EQ(key_of(back), key_of(direct));
}

TEST(Index, BitIndicesOfEveryShortPathHaveDistinctKeys) {
  // Every path of up to 8 bits: "", "0", "00" and "000..." differ only in length.
  std::vector<bit_index> paths{bit_index{}};
  for (std::size_t i = 0; i < paths.size(); ++i)
    if (paths[i].bits < 8) {
      paths.push_back(paths[i].child(0, 1));
      paths.push_back(paths[i].child(1, 1));
    }
  EXPECT_EQ(paths.size(), 511u);
  expect_keys_canonical(paths);
  // A path of 64 bits and one of 65: the word boundary.
  bit_index w64;
  for (int k = 0; k < 64; ++k) w64 = w64.child(1, 1);
  expect_keys_canonical(std::vector<bit_index>{w64, w64.child(0, 1), w64.child(1, 1), w64.parent(1)});
}

TEST(Index, StringsAreTheirOwnKeys) {
  std::vector<std::string> words{"", "a", "b", "ab", "ba", std::string("a\0b", 3), std::string(1000, 'x')};
  expect_keys_canonical(words);
  EXPECT_EQ(key_of(std::string("heat")).bytes(), "heat");
}

TEST(Index, UserVariableLengthIndices) {
  std::vector<user_index> all{{}, {"a", {}}, {"", {0}}, {"a", {0}}, {"a", {0, 0}}, {"a", {1, 2, 3}}, {"ab", {}},
                              {"a", {-1}}};
  expect_keys_canonical(all);
  EXPECT_EQ(index_hash(all[1]), all[1].hash());
  EXPECT_EQ(index_hash(index2d{1, 2}), std::hash<index2d>{}(index2d{1, 2}));
}

// An index type mismatch is a clear error, not a wrong element.
TEST(Index, AKeyOfAnotherTypeIsAUsageError) {
  EXPECT_THROW(index_of<index3d>(key_of(index2d{1, 2})), squall::usage_error);
  EXPECT_THROW(index_of<user_index>(key_of(std::string("x"))), squall::usage_error);
  EXPECT_THROW(index_of<bit_index>(key_of(index1d{5})), squall::usage_error);
  // Bytes left over: a shorter user index decoded from a longer one's key.
  EXPECT_THROW(index_of<word_only>(key_of(user_index{"word", {1, 2}})), squall::usage_error);
  try {
    index_of<index3d>(key_of(index2d{1, 2}));
  } catch (const squall::usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("8 bytes"), std::string::npos) << e.what();
  }
}

TEST(Index, NonCanonicalBitIndexBytesAreRefused) {
  bit_index odd;
  odd.bits = 3;
  odd.words = {~std::uint64_t{0}};  // bits set past the third
  EXPECT_THROW(index_of<bit_index>(key_of(odd)), squall::usage_error);
  odd.words = {0, 0};  // a word too many
  EXPECT_THROW(index_of<bit_index>(key_of(odd)), squall::usage_error);
}

TEST(Index, KeyHashSpreadsAndIsStable) {
  // The hash is a function of the bytes alone, so every node agrees on it.
  EXPECT_EQ(key().hash(), hash_bytes(""));
  EXPECT_EQ(key("abc").hash(), hash_bytes("abc"));
  EXPECT_NE(hash_bytes(std::string(8, '\0')), hash_bytes(std::string(7, '\0')));
  std::set<std::uint64_t> low_bits;
  for (int i = 0; i < 64; ++i) low_bits.insert(key_of(index1d{i}).hash() % 8);
  EXPECT_EQ(low_bits.size(), 8u);
}

TEST(Index, KeyHashReadsWordsAsTheByteDefinitionSays) {
  // hash_bytes reads whole words and a tail in pieces; the definition is byte by byte: each
  // 8-byte little-endian word chained through mix64, the zero-padded tail last.
  const auto by_bytes = [](const std::string& b) {
    std::uint64_t h = detail::mix64(b.size() + 0x9e3779b97f4a7c15ULL);
    std::uint64_t word = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
      word |= std::uint64_t{static_cast<unsigned char>(b[i])} << (8 * (i % 8));
      if (i % 8 == 7) {
        h = detail::mix64(h ^ word);
        word = 0;
      }
    }
    return detail::mix64(h ^ word);
  };
  for (std::size_t n = 0; n <= 40; ++n) {
    std::string b(n, '\0');
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<char>(0x9d * (i + 1) + n);
    EXPECT_EQ(hash_bytes(b), by_bytes(b)) << n << " bytes";
  }
}

}  // namespace
