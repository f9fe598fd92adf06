// SPDX-License-Identifier: BSD-3-Clause
// bit_index: a path of bits kept canonical (see index.hpp), so that equal paths are equal
// words and give equal keys.
#include <squall/arrays/index.hpp>
#include <squall/error.hpp>

#include <string>

namespace squall::arrays {

namespace {
constexpr std::uint64_t words_for(std::uint64_t bits) { return (bits + 63) / 64; }
}  // namespace

bool bit_index::bit(std::uint32_t i) const {
  if (i >= bits) throw usage_error("bit_index: bit " + std::to_string(i) + " of a path of " + std::to_string(bits));
  return (words[i / 64] >> (63 - i % 64)) & 1;
}

bit_index bit_index::child(unsigned value, unsigned nbits) const {
  if (nbits < 1 || nbits > 32) throw usage_error("bit_index::child: a level is 1 to 32 bits, not " + std::to_string(nbits));
  if (nbits < 32 && value >> nbits)
    throw usage_error("bit_index::child: " + std::to_string(value) + " does not fit in " + std::to_string(nbits) + " bits");
  if (bits > UINT32_MAX - nbits) throw usage_error("bit_index::child: the path would pass 2^32 bits");
  bit_index c = *this;
  c.bits = bits + nbits;
  c.words.resize(words_for(c.bits), 0);
  for (unsigned k = 0; k < nbits; ++k) {
    std::uint32_t i = bits + k;
    if ((value >> (nbits - 1 - k)) & 1) c.words[i / 64] |= std::uint64_t{1} << (63 - i % 64);
  }
  return c;
}

bit_index bit_index::parent(unsigned nbits) const {
  if (nbits > bits)
    throw usage_error("bit_index::parent: " + std::to_string(nbits) + " bits up from a path of " + std::to_string(bits));
  bit_index p = *this;
  p.bits = bits - nbits;
  p.words.resize(words_for(p.bits));
  if (p.bits % 64) p.words.back() &= ~std::uint64_t{0} << (64 - p.bits % 64);  // the dropped bits go to zero
  return p;
}

std::uint32_t bit_index::depth(unsigned nbits_per_level) const {
  if (nbits_per_level == 0) throw usage_error("bit_index::depth: a level of 0 bits");
  return bits / nbits_per_level;
}

unsigned bit_index::step(std::uint32_t level, unsigned nbits) const {
  if (nbits < 1 || nbits > 32) throw usage_error("bit_index::step: a level is 1 to 32 bits, not " + std::to_string(nbits));
  std::uint64_t first = std::uint64_t{level} * nbits;
  if (first + nbits > bits)
    throw usage_error("bit_index::step: level " + std::to_string(level) + " is past a path of " + std::to_string(bits) + " bits");
  unsigned v = 0;
  for (unsigned k = 0; k < nbits; ++k) v = (v << 1) | (bit(static_cast<std::uint32_t>(first + k)) ? 1u : 0u);
  return v;
}

void bit_index::check_size(std::uint64_t nwords) const {
  if (nwords != words_for(bits))
    throw usage_error("bit_index: " + std::to_string(nwords) + " words cannot hold exactly " + std::to_string(bits) + " bits");
}

void bit_index::check_canonical() const {
  check_size(words.size());
  if (bits % 64 && (words.back() << (bits % 64)) != 0) throw usage_error("bit_index: bits set past the path's end");
}

}  // namespace squall::arrays
