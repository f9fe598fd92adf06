// SPDX-License-Identifier: BSD-3-Clause
// Remap: a pattern from one distribution's layout to another's.
#include <squall/chaos/remap.hpp>

#include <squall/runtime.hpp>

#include <algorithm>

#include <squall/chaos/exchange.hpp>

#include "agreement.hpp"
#include "pattern.hpp"

namespace squall::chaos {

struct remap_plan::state {
  std::shared_ptr<detail::pattern> pat;  // send: offsets in the old layout; recv: in the new
  index from_size = 0, to_size = 0;
};

remap_plan::remap_plan(remap_plan&&) noexcept = default;
remap_plan& remap_plan::operator=(remap_plan&&) noexcept = default;
remap_plan::~remap_plan() = default;
// Only a plan moved from has no state: the constructor always makes one.
const remap_plan::state& remap_plan::checked() const {
  if (!s_) [[unlikely]] detail::used_after_move("chaos::remap_plan");
  return *s_;
}
index remap_plan::from_size() const { return checked().from_size; }
index remap_plan::to_size() const { return checked().to_size; }

remap_plan::remap_plan(const translation_table& from, const translation_table& to) : s_(std::make_unique<state>()) {
  std::string problem;
  if (from.global_size() != to.global_size()) {
    problem = "the distributions are of arrays of different sizes (" + std::to_string(from.global_size()) + " and " +
              std::to_string(to.global_size()) + ")";
  }
  detail::agree_or_throw(problem, "chaos::remap_plan");
  s_->from_size = from.local_size();
  s_->to_size = to.local_size();
  const std::vector<location> now = from.lookup(to.owned());  // where each new element lives
  const int nodes = squall::nodes(), me = squall::node();
  std::vector<std::vector<index>> wanted(static_cast<std::size_t>(nodes)), slots(static_cast<std::size_t>(nodes));
  std::vector<std::pair<index, index>> local;
  for (std::size_t j = 0; j < now.size(); ++j) {
    if (now[j].owner == me) {
      local.emplace_back(now[j].offset, static_cast<index>(j));
    } else {
      wanted[static_cast<std::size_t>(now[j].owner)].push_back(now[j].offset);
      slots[static_cast<std::size_t>(now[j].owner)].push_back(static_cast<index>(j));
    }
  }
  s_->pat = detail::pattern::make(squall::pattern_from_lists(exchange(wanted), std::move(slots), std::move(local)));
}

void remap_plan::apply_bytes(detail::array_ref in, detail::array_ref out) const {
  const state& s = checked();
  if (in.count != static_cast<std::size_t>(s.from_size) || out.count != static_cast<std::size_t>(s.to_size)) {
    throw usage_error("chaos::remap_plan::apply: the arrays hold " + std::to_string(in.count) + " and " +
                      std::to_string(out.count) + " elements; this node's part needs " +
                      std::to_string(s.from_size) + " before and " + std::to_string(s.to_size) + " after");
  }
  if (in.type_hash != out.type_hash || in.elem_size != out.elem_size) {
    throw usage_error("chaos::remap_plan::apply: the arrays hold elements of different types");
  }
  detail::end(detail::begin_pattern(s.pat, {in, out, nullptr, false, detail::call_kind::remap}));
}

std::vector<index> owned_after(const translation_table& table, std::span<const int> new_owner) {
  const int nodes = squall::nodes();
  std::string problem;
  if (new_owner.size() != static_cast<std::size_t>(table.local_size())) {
    problem = "one new owner per owned element is needed (" + std::to_string(table.local_size()) + "), got " +
              std::to_string(new_owner.size());
  }
  for (int p : new_owner) {
    if (problem.empty() && (p < 0 || p >= nodes)) problem = "new owner " + std::to_string(p) + " is not a node";
  }
  detail::agree_or_throw(problem, "chaos::owned_after");
  std::vector<std::vector<index>> out(static_cast<std::size_t>(nodes));
  const auto owned = table.owned();
  for (std::size_t i = 0; i < owned.size(); ++i) out[static_cast<std::size_t>(new_owner[i])].push_back(owned[i]);
  std::vector<index> mine;
  for (const auto& part : exchange(out)) mine.insert(mine.end(), part.begin(), part.end());
  std::sort(mine.begin(), mine.end());
  return mine;
}

}  // namespace squall::chaos
