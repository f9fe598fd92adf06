// SPDX-License-Identifier: BSD-3-Clause
// Array indices: what names an element of a migratable array (the paper's section 3.1).
//
// - index<N>: N integers, N = 1..6 (index1d .. index6d);
// - bit_index: a path of bits of any length, as a quadtree's (two bits a level);
// - std::string;
// - any user type that models array_index: equality, default construction, a cereal
//   `serialize` member (or cereal's non-member functions), and std::hash or a `hash()` member.
//   Variable-length types are fine: the runtime keys elements by their serialised bytes
//   (squall/arrays/key.hpp), never by the type's size.
#pragma once
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <cereal/archives/binary.hpp>
#include <cereal/cereal.hpp>
#include <cereal/types/array.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>
#include <squall/arrays/bounded_archive.hpp>

namespace squall::arrays {

namespace detail {
// splitmix64's finaliser: a bijection whose low bits depend on every input bit, so that
// `hash % nodes` spreads consecutive indices.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace detail

// N integers. Implicit from N integers, so that arr[{i, j}] and arr[7] read naturally.
template <int N>
struct index {
  static_assert(N >= 1 && N <= 6, "squall::arrays::index<N> has 1 to 6 dimensions");
  std::array<std::int32_t, N> at{};

  constexpr index() = default;
  template <std::integral... I>
    requires(sizeof...(I) == N)
  constexpr index(I... i) : at{static_cast<std::int32_t>(i)...} {}

  constexpr std::int32_t& operator[](std::size_t d) { return at[d]; }
  constexpr std::int32_t operator[](std::size_t d) const { return at[d]; }
  friend constexpr bool operator==(const index&, const index&) = default;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(at);
  }
};
using index1d = index<1>;
using index2d = index<2>;
using index3d = index<3>;
using index4d = index<4>;
using index5d = index<5>;
using index6d = index<6>;

// A path of bits, the first step first: a quadtree leaf is its directions from the root, two
// bits a level (the paper's "10;11"). Canonical so that == is a plain comparison: words holds
// exactly ceil(bits/64) words, bit i is bit 63 - i%64 of words[i/64], and the bits past `bits`
// are zero. Loading a non-canonical form throws squall::usage_error.
struct bit_index {
  std::vector<std::uint64_t> words;
  std::uint32_t bits = 0;

  // The path one level deeper: the low `nbits` bits of `value` appended, most significant
  // first (nbits 1..32; value must fit in them).
  bit_index child(unsigned value, unsigned nbits) const;
  // The path one level up: the last `nbits` bits removed (at most `bits`).
  bit_index parent(unsigned nbits) const;
  // Levels of `nbits_per_level` bits each (the bit count with the default of 1).
  std::uint32_t depth(unsigned nbits_per_level = 1) const;
  // The value of level `level`'s `nbits` bits: child(v, n).step(depth(n) - 1, n) == v.
  unsigned step(std::uint32_t level, unsigned nbits) const;
  bool bit(std::uint32_t i) const;

  friend bool operator==(const bit_index&, const bit_index&) = default;

  template <class Archive>
  void save(Archive& ar) const {
    ar(bits, cereal::make_size_tag(static_cast<cereal::size_type>(words.size())));
    for (std::uint64_t w : words) ar(w);
  }
  template <class Archive>
  void load(Archive& ar) {
    cereal::size_type n = 0;
    ar(bits, cereal::make_size_tag(n));
    check_size(n);  // before allocating: the bytes may not be a bit_index at all
    words.assign(n, 0);
    for (std::uint64_t& w : words) ar(w);
    check_canonical();
  }

 private:
  void check_size(std::uint64_t nwords) const;
  void check_canonical() const;
};

namespace detail {
template <class I>
concept has_hash_member = requires(const I& i) {
  { i.hash() } -> std::convertible_to<std::size_t>;
};
template <class I>
concept has_std_hash = requires(const I& i) {
  { std::hash<I>{}(i) } -> std::convertible_to<std::size_t>;
};
template <class I>
concept cereal_binary = cereal::traits::is_output_serializable<I, cereal::BinaryOutputArchive>::value &&
                        cereal::traits::is_input_serializable<I, bounded_input_archive>::value;
}  // namespace detail

// What may index an array. std::regular: copyable, default-constructible (an index is decoded
// into a default one) and equality-comparable.
template <class I>
concept array_index =
    std::regular<I> && (detail::has_hash_member<I> || detail::has_std_hash<I>) && detail::cereal_binary<I>;

// The index's own hash, whichever form it has. Placement never uses it (it need not agree
// between nodes); the runtime hashes keys (key.hpp) instead.
template <array_index I>
std::size_t index_hash(const I& i) {
  if constexpr (detail::has_hash_member<I>)
    return i.hash();
  else
    return std::hash<I>{}(i);
}

}  // namespace squall::arrays

template <int N>
struct std::hash<squall::arrays::index<N>> {
  std::size_t operator()(const squall::arrays::index<N>& i) const noexcept {
    std::uint64_t h = N;
    for (std::int32_t v : i.at) h = squall::arrays::detail::mix64(h ^ static_cast<std::uint32_t>(v));
    return h;
  }
};

template <>
struct std::hash<squall::arrays::bit_index> {
  std::size_t operator()(const squall::arrays::bit_index& b) const noexcept {
    std::uint64_t h = b.bits;
    for (std::uint64_t w : b.words) h = squall::arrays::detail::mix64(h ^ w);
    return h;
  }
};
