// SPDX-License-Identifier: BSD-3-Clause
// arrays_docindex: an inverted index on a migratable array indexed by words (std::string
// indices, hash home).
//
// Each node generates its share of a synthetic corpus (documents d with d % nodes == node)
// and sends add(d, count) to the element of each distinct word of each document; the element
// is created at its home by the first add (creation on demand). A broadcast then has every
// word contribute to two reductions: a sum of (words, postings, occurrences) and the
// concatenated vocabulary. Node 0 queries the documents of some words (request<&Word::docs>)
// and compares all of it with a sequential inverted index built in the same program,
// printing OK or MISMATCH (exit status 1).
#include <squall/arrays.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "corpus.hpp"
#include "squall/apps/checksum.hpp"
#include "squall/apps/options.hpp"
#include "squall/apps/phase_timer.hpp"

namespace squall::apps::docindex {

// The element and its callbacks are in a named namespace: libarrays instantiates its entry
// methods' invokers with the element type, and GCC (-Wsubobject-linkage) rejects a type from
// an anonymous namespace there when this file is compiled inside a unity file.
namespace arrays = squall::arrays;

using Totals = std::array<std::uint64_t, 3>;  // words, postings (word, document), occurrences

std::optional<Totals> totals;
std::optional<std::vector<std::string>> vocabulary;
void on_totals(const Totals& t) { totals = t; }
void on_vocabulary(const std::vector<std::string>& v) { vocabulary = v; }

struct Word : arrays::element<std::string> {
  Postings postings;  // (document, count), in arrival order

  void add(std::uint32_t doc, std::uint32_t count) { postings.emplace_back(doc, count); }

  std::vector<std::uint32_t> docs() const {
    std::vector<std::uint32_t> d;
    for (const auto& p : postings) d.push_back(p.first);
    std::sort(d.begin(), d.end());
    return d;
  }

  void report() {
    std::uint64_t occurrences = 0;
    for (const auto& p : postings) occurrences += p.second;
    contribute(Totals{1, postings.size(), occurrences}, arrays::sum<Totals>(), arrays::on_root<&on_totals>());
    contribute(std::vector<std::string>{this_index()}, arrays::concat<std::string>(),
               arrays::on_root<&on_vocabulary>());
  }

  template <class A>
  void serialize(A& ar) {
    ar(postings);
  }
};

}  // namespace squall::apps::docindex

// The first add to a word creates its element.
template <>
inline constexpr bool squall::arrays::creates_on_demand<&squall::apps::docindex::Word::add> = true;

namespace {

namespace arrays = squall::arrays;
namespace docindex = squall::apps::docindex;
using docindex::Totals, docindex::Word, docindex::totals, docindex::vocabulary;
using squall::apps::Options;
using squall::apps::seconds_since;

constexpr const char* kUsage =
    "usage: squallrun -n N arrays_docindex [--small] [--documents 4000] [--vocabulary 20000] [--seed 1]\n"
    "                                      [--queries 64]\n"
    "  --documents d   documents in the corpus, 20 to 200 words each\n"
    "  --vocabulary v  distinct words the generator draws from (log-uniform ranks)\n"
    "  --queries q     words node 0 looks up (the most frequent, a spread of rarer ones, and\n"
    "                  two words the generator cannot make)\n"
    "  --small         300 documents over 2000 words, 24 queries (for tests)\n";

// The words node 0 asks about: the most frequent ranks, a spread of rarer ones, and two that
// no document contains (no 'z' or 'y' in the generator's alphabet).
std::vector<std::string> query_words(std::uint32_t queries, std::uint32_t vocab) {
  std::vector<std::string> q{"zyzzyva", "yz"};
  const std::uint32_t frequent = queries / 4;
  for (std::uint32_t r = 0; r < frequent && q.size() < queries; ++r) q.push_back(docindex::word_of_rank(r));
  const std::uint32_t rest = queries > q.size() ? queries - static_cast<std::uint32_t>(q.size()) : 0;
  for (std::uint32_t k = 0; k < rest; ++k) {
    const std::uint64_t rank = frequent + std::uint64_t{k} * (vocab - frequent) / rest;
    q.push_back(docindex::word_of_rank(static_cast<std::uint32_t>(rank)));
  }
  return q;
}

// What both versions are checked by: the sorted vocabulary, the totals and every answer.
std::uint64_t checksum(const std::vector<std::string>& vocab, const Totals& t,
                       const std::vector<std::vector<std::uint32_t>>& answers) {
  squall::apps::Checksum sum;
  for (const std::string& w : vocab) {
    for (const char c : w) sum.add(static_cast<unsigned char>(c));
    sum.add(0x100);
  }
  for (const std::uint64_t x : t) sum.add(x);
  for (const auto& a : answers) {
    sum.add(a.size());
    for (const std::uint32_t d : a) sum.add(d);
  }
  return sum.value();
}

int run(Options& options) {
  const bool small = options.flag("small");
  docindex::CorpusShape shape;
  shape.documents = options.count_as<std::uint32_t>("documents", small ? 300 : 4000);
  shape.vocabulary = options.count_as<std::uint32_t>("vocabulary", small ? 2000 : 20000);
  shape.seed = options.count("seed", 1);
  const auto queries = options.count_as<std::uint32_t>("queries", small ? 24 : 64);
  options.finish();
  if (shape.vocabulary < 2) throw squall::apps::OptionError("--vocabulary must be at least 2");
  // No document, no word element to report the totals: the run ended "MISMATCH", status 1.
  if (shape.documents < 1) throw squall::apps::OptionError("--documents must be at least 1");

  squall::init();
  const int me = squall::node(), nodes = squall::nodes();
  const auto words = arrays::array<Word, std::string>::create(arrays::hash_home());
  arrays::quiesce();

  squall::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t sent = 0;
  const auto stride = static_cast<std::uint32_t>(nodes);
  for (std::uint32_t doc = static_cast<std::uint32_t>(me); doc < shape.documents; doc += stride) {
    for (const auto& [word, count] : docindex::term_counts(docindex::document_text(shape, doc))) {
      words[word].call<&Word::add>(doc, count);
      ++sent;
    }
  }
  arrays::quiesce();
  const double index_s = seconds_since(t0);
  const std::uint64_t adds = squall::allreduce(sent);
  const std::uint64_t elements = squall::allreduce(static_cast<std::uint64_t>(words.local_count()));

  if (me == 0) words.broadcast<&Word::report>();
  arrays::quiesce();

  // Queries: words that are not in the vocabulary have no element (a request to one would
  // wait at its home for ever), so they are answered here.
  const std::vector<std::string> asked = query_words(queries, shape.vocabulary);
  std::vector<std::vector<std::uint32_t>> answers(asked.size());
  std::vector<std::pair<std::size_t, arrays::future<std::vector<std::uint32_t>>>> pending;
  bool got_reductions = true;
  if (me == 0) {
    got_reductions = totals.has_value() && vocabulary.has_value();
    if (got_reductions) {
      std::sort(vocabulary->begin(), vocabulary->end());
      for (std::size_t k = 0; k < asked.size(); ++k)
        if (std::binary_search(vocabulary->begin(), vocabulary->end(), asked[k]))
          pending.emplace_back(k, words[asked[k]].request<&Word::docs>());
    }
  }
  arrays::quiesce();

  bool ok = true;
  if (me == 0) {
    for (auto& [k, answer] : pending) answers[k] = answer.get();
    const auto t1 = std::chrono::steady_clock::now();
    const std::map<std::string, docindex::Postings> reference = docindex::build_index(shape);
    const double sequential_s = seconds_since(t1);

    std::vector<std::string> reference_vocabulary;
    Totals reference_totals{0, 0, 0};
    for (const auto& [w, p] : reference) {
      reference_vocabulary.push_back(w);
      ++reference_totals[0];
      reference_totals[1] += p.size();
      for (const auto& e : p) reference_totals[2] += e.second;
    }
    std::vector<std::vector<std::uint32_t>> reference_answers(asked.size());
    int found = 0;
    for (std::size_t k = 0; k < asked.size(); ++k) {
      if (auto it = reference.find(asked[k]); it != reference.end()) {
        ++found;
        for (const auto& e : it->second) reference_answers[k].push_back(e.first);
      }
    }
    const Totals got = totals.value_or(Totals{0, 0, 0});
    const std::vector<std::string> got_vocabulary = vocabulary.value_or(std::vector<std::string>{});
    int wrong_answers = 0;
    for (std::size_t k = 0; k < asked.size(); ++k) wrong_answers += answers[k] != reference_answers[k] ? 1 : 0;
    const bool totals_ok = got == reference_totals && adds == reference_totals[1] && elements == reference_totals[0];
    const bool vocabulary_ok = got_vocabulary == reference_vocabulary;
    ok = got_reductions && totals_ok && vocabulary_ok && wrong_answers == 0;

    std::printf("arrays_docindex: %u documents over %u ranks, seed %llu, %d nodes\n", shape.documents,
                shape.vocabulary, static_cast<unsigned long long>(shape.seed), nodes);
    std::printf("words %llu (reference %llu, elements %llu), postings %llu (reference %llu, adds sent %llu), "
                "occurrences %llu (reference %llu)\n",
                static_cast<unsigned long long>(got[0]), static_cast<unsigned long long>(reference_totals[0]),
                static_cast<unsigned long long>(elements), static_cast<unsigned long long>(got[1]),
                static_cast<unsigned long long>(reference_totals[1]), static_cast<unsigned long long>(adds),
                static_cast<unsigned long long>(got[2]), static_cast<unsigned long long>(reference_totals[2]));
    std::printf("vocabulary (concat reduction) %s; %zu queries, %d in the corpus, %d wrong\n",
                vocabulary_ok ? "equal" : "DIFFERS", asked.size(), found, wrong_answers);
    std::printf("time: arrays index %.6f s, sequential index %.6f s\n", index_s, sequential_s);
    std::printf("checksum %016llx reference %016llx\n",
                static_cast<unsigned long long>(checksum(got_vocabulary, got, answers)),
                static_cast<unsigned long long>(checksum(reference_vocabulary, reference_totals, reference_answers)));
    std::fflush(stdout);
  }
  squall::finalize();
  if (me == 0) std::printf("%s\n", ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return squall::apps::run_program(argc, argv, "arrays_docindex", kUsage, &run); }
