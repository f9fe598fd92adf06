// SPDX-License-Identifier: BSD-3-Clause
// The inspector: from indirection arrays of global indices to a schedule, rewriting the
// arrays to local offsets on the way.
#include <squall/chaos/schedule.hpp>

#include <squall/runtime.hpp>

#include <algorithm>
#include <chrono>
#include <unordered_map>

#include <squall/chaos/exchange.hpp>

#include "agreement.hpp"
#include "counters.hpp"
#include "schedule_state.hpp"

namespace squall::chaos {
namespace {

std::string out_of_range(std::initializer_list<std::span<index>> arrays, index global_size) {
  std::size_t k = 0;
  for (const auto& a : arrays) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i] < 0 || a[i] >= global_size) {
        return "indirection array " + std::to_string(k) + " holds global index " + std::to_string(a[i]) +
               " at position " + std::to_string(i) + ", outside [0, " + std::to_string(global_size) + ")";
      }
    }
    ++k;
  }
  return {};
}

// Where each referenced global index goes. The inspector looks every reference up twice, so on
// moldyn's million-pair lists a hash map was 70 ms of each inspector run: a dense array is used
// whenever the global index space is not much larger than the references (the usual case), a
// hash map otherwise, so that a few references into a huge space stay cheap in memory.
class position_map {
 public:
  position_map(index global_size, std::size_t references)
      : dense_(global_size <= std::max<index>(index{1} << 20, 4 * static_cast<index>(references))) {
    if (dense_) slot_.assign(static_cast<std::size_t>(global_size), unseen);
  }
  // True the first time `g` is added.
  bool add(index g) {
    if (!dense_) return sparse_.try_emplace(g, unseen).second;
    index& at = slot_[static_cast<std::size_t>(g)];
    if (at != unseen) return false;
    at = placed_later;
    return true;
  }
  index& operator[](index g) { return dense_ ? slot_[static_cast<std::size_t>(g)] : sparse_[g]; }

 private:
  static constexpr index unseen = -2, placed_later = -1;
  bool dense_;
  std::vector<index> slot_;
  std::unordered_map<index, index> sparse_;
};

// `earlier_schedule` is null for the first inspector, or the schedule the incremental one builds on.
schedule build(const translation_table& table, const schedule* earlier_schedule,
               std::initializer_list<std::span<index>> arrays) {
  constexpr const char* api = "chaos::inspect";
  const auto start = std::chrono::steady_clock::now();
  std::string problem = out_of_range(arrays, table.global_size());
  // An earlier schedule moved from, on this node only, is refused by the agreement on every
  // node: refused here alone, it left the others in the agreement (or in step no more).
  const schedule::state* earlier = nullptr;
  if (earlier_schedule != nullptr && earlier_schedule->moved_from()) {
    if (problem.empty()) problem = "the earlier schedule is " + detail::moved_from_text("chaos::schedule");
  } else if (earlier_schedule != nullptr) {
    earlier = earlier_schedule->internals().get();
  }
  if (problem.empty() && earlier != nullptr && earlier->local_size != table.local_size()) {
    problem = "the earlier schedule was built for " + std::to_string(earlier->local_size) +
              " owned elements, the table gives this node " + std::to_string(table.local_size());
  }
  detail::agree_or_throw(problem, api);

  // Each distinct global index once, in order of first reference.
  std::size_t references = 0;
  for (const auto& a : arrays) references += a.size();
  position_map position_of(table.global_size(), references);
  std::vector<index> distinct;
  for (const auto& a : arrays) {
    for (index g : a) {
      if (position_of.add(g)) distinct.push_back(g);
    }
  }
  const std::vector<location> where = table.lookup(distinct);

  auto s = std::make_shared<schedule::state>();
  s->local_size = table.local_size();
  s->ghost_begin = s->ghost_end = earlier != nullptr ? earlier->ghost_end : s->local_size;
  if (earlier != nullptr) s->ghost_of = earlier->ghost_of;
  const int nodes = squall::nodes(), me = squall::node();
  std::vector<std::vector<index>> wanted(static_cast<std::size_t>(nodes));  // owners' offsets, per owner
  std::vector<std::vector<index>> slots(static_cast<std::size_t>(nodes));   // where they land here
  for (std::size_t i = 0; i < distinct.size(); ++i) {
    const index g = distinct[i];
    index& pos = position_of[g];
    if (where[i].owner == me) {
      pos = where[i].offset;
    } else if (auto known = s->ghost_of.find(g); known != s->ghost_of.end()) {
      pos = known->second;
    } else {
      pos = s->ghost_end++;
      s->ghost_of.emplace(g, pos);
      wanted[static_cast<std::size_t>(where[i].owner)].push_back(where[i].offset);
      slots[static_cast<std::size_t>(where[i].owner)].push_back(pos);
    }
  }
  for (const auto& a : arrays) {
    for (index& g : a) g = position_of[g];
  }

  // Tell each owner what to send here; learn what to send to each node.
  // (CHAOS's own exchange, not squall::pattern_from_requests: it is numbered and counted
  // with the library's other calls.)
  s->pat = detail::pattern::make(squall::pattern_from_lists(exchange(wanted), std::move(slots)));
  detail::count_inspector_ns(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count()));
  return schedule(std::move(s));
}

}  // namespace

schedule inspect(const translation_table& table, std::initializer_list<std::span<index>> indirection) {
  return build(table, nullptr, indirection);
}

schedule inspect(const translation_table& table, const schedule& earlier,
                 std::initializer_list<std::span<index>> indirection) {
  return build(table, &earlier, indirection);
}

}  // namespace squall::chaos
