// SPDX-License-Identifier: BSD-3-Clause
#include "corpus.hpp"

#include <cctype>
#include <cmath>

namespace squall::apps::docindex {
namespace {

// splitmix64: a small generator whose whole state is one word, seeded by (seed, document).
struct Draws {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t x = (state += 0x9e3779b97f4a7c15ULL);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  std::uint32_t below(std::uint32_t bound) { return static_cast<std::uint32_t>(next() % bound); }
};

constexpr const char* kConsonants = "bcdfghjklmnprst";  // 15
constexpr const char* kVowels = "aeiou";               // 5

}  // namespace

std::string word_of_rank(std::uint32_t rank) {
  std::string w;
  do {
    const std::uint32_t syllable = rank % 75;
    w += kConsonants[syllable / 5];
    w += kVowels[syllable % 5];
    rank /= 75;
  } while (rank != 0);
  return w;
}

std::string document_text(const CorpusShape& shape, std::uint32_t doc) {
  Draws d{shape.seed * 0x100000001b3ULL ^ (std::uint64_t{doc} << 20)};
  const std::uint32_t words = shape.min_words + d.below(shape.max_words - shape.min_words + 1);
  std::string text;
  bool sentence_start = true;
  for (std::uint32_t k = 0; k < words; ++k) {
    // Log-uniform rank: P(rank) ~ 1/rank, so a few words are in most documents.
    const auto rank = static_cast<std::uint32_t>(std::pow(static_cast<double>(shape.vocabulary), d.uniform())) - 1;
    std::string w = word_of_rank(rank);
    if (sentence_start) w[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(w[0])));
    text += w;
    const std::uint32_t mark = d.below(16);
    sentence_start = mark == 0 || k + 1 == words;
    text += sentence_start ? ". " : mark == 1 ? ", " : " ";
  }
  return text;
}

std::map<std::string, std::uint32_t> term_counts(const std::string& text) {
  std::map<std::string, std::uint32_t> counts;
  std::string w;
  for (const char ch : text + " ") {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalpha(c)) {
      w += static_cast<char>(std::tolower(c));
    } else if (!w.empty()) {
      ++counts[w];
      w.clear();
    }
  }
  return counts;
}

std::map<std::string, Postings> build_index(const CorpusShape& shape) {
  std::map<std::string, Postings> index;
  for (std::uint32_t doc = 0; doc < shape.documents; ++doc)
    for (const auto& [word, count] : term_counts(document_text(shape, doc))) index[word].emplace_back(doc, count);
  return index;
}

}  // namespace squall::apps::docindex
