// SPDX-License-Identifier: BSD-3-Clause
// Keys: an index's canonical bytes. The runtime's tables, messages and home maps see only keys,
// so one code path serves every index type, fixed or variable length. Equal indices give
// equal keys; key_of and index_of are inverses.
//
// Bytes are the index's cereal binary serialisation, except where a shorter form is as
// canonical: a std::string is its own bytes, and an index<N> its N int32s. Integers are in
// the machine's byte order: the nodes of a job share one architecture.
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <squall/arrays/index.hpp>
#include <squall/error.hpp>

namespace squall::arrays {

// A 64-bit hash of bytes, the same on every node (std::hash promises neither): 8-byte
// words, little-endian, chained through splitmix64's finaliser; the length goes in first so
// that a zero-padded tail cannot collide with a longer input.
inline std::uint64_t hash_bytes(std::string_view b) noexcept {
  static_assert(std::endian::native == std::endian::little, "hash_bytes reads its words in place");
  const auto* p = reinterpret_cast<const unsigned char*>(b.data());
  const std::size_t n = b.size();
  std::uint64_t h = detail::mix64(n + 0x9e3779b97f4a7c15ULL);
  std::size_t at = 0;
  for (; at + 8 <= n; at += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, p + at, 8);
    h = detail::mix64(h ^ word);
  }
  // The last 0-7 bytes as one zero-padded word, without a byte loop.
  const std::size_t left = n - at;
  std::uint64_t tail = 0;
  if (left >= 4) {
    std::uint32_t first = 0, last = 0;  // these overlap when fewer than 8 are left
    std::memcpy(&first, p + at, 4);
    std::memcpy(&last, p + at + left - 4, 4);
    tail = first;
    if (left > 4) tail |= std::uint64_t{last >> (8 * (8 - left))} << 32;
  } else if (left > 0) {
    tail = std::uint64_t{p[at]} | std::uint64_t{p[at + left / 2]} << (8 * (left / 2)) |
           std::uint64_t{p[at + left - 1]} << (8 * (left - 1));
  }
  return detail::mix64(h ^ tail);
}

class key {
 public:
  key() : hash_(hash_bytes({})) {}
  explicit key(std::string bytes) : hash_(hash_bytes(bytes)), bytes_(std::move(bytes)) {}

  const std::string& bytes() const noexcept { return bytes_; }
  std::uint64_t hash() const noexcept { return hash_; }

  // The hash first: unequal keys almost always differ there.
  friend bool operator==(const key&, const key&) = default;

 private:
  std::uint64_t hash_;  // kept: every table lookup and home_of needs it
  std::string bytes_;
};

namespace detail {
template <class I>
inline constexpr bool is_fixed_index = false;
template <int N>
inline constexpr bool is_fixed_index<index<N>> = true;

[[noreturn]] void throw_bad_key(std::size_t size, const char* why);
}  // namespace detail

template <array_index I>
key key_of(const I& i) {
  if constexpr (std::is_same_v<I, std::string>) {
    return key(i);
  } else if constexpr (detail::is_fixed_index<I>) {
    std::string b(sizeof i.at, '\0');
    std::memcpy(b.data(), i.at.data(), sizeof i.at);
    return key(std::move(b));
  } else {
    std::ostringstream os(std::ios::binary);
    {
      cereal::BinaryOutputArchive ar(os);
      ar(i);
    }
    return key(std::move(os).str());
  }
}

// Throws squall::usage_error when the key's bytes are not an I (an index type mismatch).
template <array_index I>
I index_of(const key& k) {
  if constexpr (std::is_same_v<I, std::string>) {
    return k.bytes();
  } else if constexpr (detail::is_fixed_index<I>) {
    I i;
    if (k.bytes().size() != sizeof i.at) detail::throw_bad_key(k.bytes().size(), "is not this index<N>'s size");
    std::memcpy(i.at.data(), k.bytes().data(), sizeof i.at);
    return i;
  } else {
    detail::bounded_input_archive ar(k.bytes());
    I i;
    try {
      ar(i);
    } catch (const cereal::Exception&) {
      detail::throw_bad_key(k.bytes().size(), "end before a whole index was read");
    }
    if (ar.left() != 0) detail::throw_bad_key(k.bytes().size(), "hold more than one index");
    return i;
  }
}

}  // namespace squall::arrays

template <>
struct std::hash<squall::arrays::key> {
  std::size_t operator()(const squall::arrays::key& k) const noexcept { return k.hash(); }
};
