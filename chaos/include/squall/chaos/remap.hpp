// SPDX-License-Identifier: BSD-3-Clause
// Remap: moving distributed arrays from one distribution to another.
#pragma once
#include <initializer_list>
#include <span>
#include <vector>

#include <squall/chaos/schedule.hpp>
#include <squall/chaos/translation_table.hpp>

namespace squall::chaos {

// Collective. The schedule that moves data laid out by `from` into the layout of `to` (both
// over the same global indices). Build it once, use it for any number of arrays. A plan moved
// from is a usage_error wherever it is used (on that node), until one is assigned to it.
class remap_plan {
 public:
  remap_plan(const translation_table& from, const translation_table& to);
  remap_plan(remap_plan&&) noexcept;
  remap_plan& operator=(remap_plan&&) noexcept;
  ~remap_plan();

  index from_size() const;  // this node's elements before (from.local_size())
  index to_size() const;    // and after (to.local_size())

  // Collective. Moves `in` (from_size() elements) into `out` (to_size() elements); wrong
  // sizes are a usage_error on this node only (as for gather: the others then end the job
  // as out of step). One message per communicating pair.
  template <class T>
  void apply(std::span<const T> in, std::span<T> out) const {
    apply_bytes(detail::ref(std::span<T>(const_cast<T*>(in.data()), in.size())), detail::ref(out));
  }
  template <class T>
  std::vector<T> apply(std::span<const T> in) const {
    std::vector<T> out(static_cast<std::size_t>(to_size()));
    apply(in, std::span<T>(out));
    return out;
  }

  struct state;

 private:
  void apply_bytes(detail::array_ref in, detail::array_ref out) const;
  const state& checked() const;  // s_, or usage_error if it was moved from
  std::unique_ptr<state> s_;
};

// Collective. Given a new owner for each of this node's elements (in local order of `table`,
// e.g. a partitioner's result), the global indices this node owns afterwards, ascending:
// the `owned` list of the new translation table.
std::vector<index> owned_after(const translation_table& table, std::span<const int> new_owner);

}  // namespace squall::chaos
