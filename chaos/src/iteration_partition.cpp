// SPDX-License-Identifier: BSD-3-Clause
// Iteration partitioners: which node runs each of this node's loop iterations.
//
// Not collective: the lookups go through the translation table, and "the least-loaded node
// so far" (almost_owner_computes's tie-break) counts only the iterations this node has given
// out in this call, in iteration order, not what other nodes give out.
#include <string>

#include <squall/runtime.hpp>

#include "partition_support.hpp"

namespace squall::chaos {
namespace {

void check_iterations(const translation_table& table, std::span<const index> offsets, std::span<const index> refs,
                      iteration_rule rule) {
  const std::string what = "chaos::partition_iterations: ";
  if (offsets.empty()) {
    if (!refs.empty()) throw usage_error(what + "refs given without offsets (offsets holds one more value than there are iterations)");
    return;
  }
  if (offsets.front() != 0) throw usage_error(what + "offsets must start at 0 (got " + std::to_string(offsets.front()) + ")");
  for (std::size_t i = 1; i < offsets.size(); ++i) {
    if (offsets[i] < offsets[i - 1]) throw usage_error(what + "offsets decrease at iteration " + std::to_string(i - 1));
    if (rule == iteration_rule::owner_computes && offsets[i] == offsets[i - 1]) {
      throw usage_error(what + "iteration " + std::to_string(i - 1) +
                        " references nothing (owner_computes gives an iteration to the owner of its first reference)");
    }
  }
  if (offsets.back() != static_cast<index>(refs.size())) {
    throw usage_error(what + "offsets end at " + std::to_string(offsets.back()) + " but refs holds " +
                      std::to_string(refs.size()) + " values");
  }
  for (std::size_t j = 0; j < refs.size(); ++j) {
    if (refs[j] < 0 || refs[j] >= table.global_size()) {
      throw usage_error(what + "refs[" + std::to_string(j) + "] is " + std::to_string(refs[j]) + ", outside [0, " +
                        std::to_string(table.global_size()) + ")");
    }
  }
}

// The node owning most of `refs`; among equals the one given the fewest iterations so far,
// then the lowest-numbered. With no references, the least-loaded node.
int almost_owner(std::span<const location> refs, std::vector<index>& count, std::vector<int>& touched,
                 const std::vector<index>& load) {
  for (const location& r : refs) {
    if (count[static_cast<std::size_t>(r.owner)]++ == 0) touched.push_back(r.owner);
  }
  if (touched.empty()) {
    for (std::size_t p = 0; p < load.size(); ++p) touched.push_back(static_cast<int>(p));
  }
  int best = touched.front();
  auto better = [&](int a, int b) {  // is a better than b?
    const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
    if (count[ua] != count[ub]) return count[ua] > count[ub];
    if (load[ua] != load[ub]) return load[ua] < load[ub];
    return a < b;
  };
  for (const int p : touched) {
    if (better(p, best)) best = p;
  }
  for (const int p : touched) count[static_cast<std::size_t>(p)] = 0;
  touched.clear();
  return best;
}

}  // namespace

std::vector<int> partition_iterations(const translation_table& table, std::span<const index> offsets,
                                      std::span<const index> refs, iteration_rule rule) {
  check_iterations(table, offsets, refs, rule);
  if (offsets.empty()) return {};
  const std::vector<location> where = table.lookup(refs);
  const auto nodes = static_cast<std::size_t>(squall::nodes());
  std::vector<index> load(nodes, 0), count(nodes, 0);
  std::vector<int> touched;
  std::vector<int> node(offsets.size() - 1);
  for (std::size_t it = 0; it + 1 < offsets.size(); ++it) {
    const auto first = static_cast<std::size_t>(offsets[it]), last = static_cast<std::size_t>(offsets[it + 1]);
    node[it] = rule == iteration_rule::owner_computes
                   ? where[first].owner
                   : almost_owner(std::span<const location>(where).subspan(first, last - first), count, touched, load);
    ++load[static_cast<std::size_t>(node[it])];
  }
  return node;
}

}  // namespace squall::chaos
