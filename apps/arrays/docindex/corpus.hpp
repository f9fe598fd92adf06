// SPDX-License-Identifier: BSD-3-Clause
// A synthetic corpus, the same on every node: document d's text is a pure function of
// (seed, d), so a node generates its own share and node 0 can generate all of it for the
// sequential index. Words are made of consonant-vowel syllables (word w has one syllable per
// base-75 digit of w, so distinct ranks give distinct words) and drawn with a roughly Zipfian
// (log-uniform) rank; sentences start with a capital and end in a full stop, and commas
// appear between words, so the tokenizer has something to do.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace squall::apps::docindex {

struct CorpusShape {
  std::uint64_t seed = 1;
  std::uint32_t documents = 4000;
  std::uint32_t vocabulary = 20000;  // ranks drawn from 0..vocabulary-1
  std::uint32_t min_words = 20, max_words = 200;
};

std::string word_of_rank(std::uint32_t rank);
std::string document_text(const CorpusShape& shape, std::uint32_t doc);
// The document's words (lower case, split at anything not a letter) with their counts.
std::map<std::string, std::uint32_t> term_counts(const std::string& text);

// The sequential inverted index: word -> (document, count) in document order.
using Postings = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
std::map<std::string, Postings> build_index(const CorpusShape& shape);

}  // namespace squall::apps::docindex
