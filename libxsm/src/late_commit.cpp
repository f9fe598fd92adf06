// SPDX-License-Identifier: BSD-3-Clause
// late-commit append: a prefix sum, then one channel message per (node, home) pair
// (late_commit.hpp).
#include <squall/xsm/late_commit.hpp>

#include <algorithm>
#include <cstring>
#include <string>

#include <squall/channel.hpp>
#include <squall/collectives.hpp>
#include <squall/error.hpp>
#include <squall/runtime.hpp>
#include <squall/xsm.hpp>

#include "phase_copies.hpp"

namespace squall::xsm {

namespace detail {

struct late_commit_state {
  late_commit_state(late_commit& l, std::size_t item, std::size_t cap)
      : copies("late_commit", l.fetches, l.copies_sent), item_size(item), capacity(cap) {}

  phase_copies<late_commit> copies;
  std::size_t item_size, capacity;
  std::size_t block_size = 0;
  block_index first = 0, end = 0;
  std::byte* list = nullptr;
  std::vector<std::size_t> home_begin, home_end;  // [node]: the bytes of the list homed there
  std::unique_ptr<channel_set> channels;
  std::vector<std::byte> pending;  // this node's items since the last commit
  std::size_t size = 0, first_index = 0;
};

}  // namespace detail

namespace {

struct span_of_bytes {
  std::size_t begin, end;
  bool empty() const { return begin >= end; }
};
span_of_bytes meet(span_of_bytes a, span_of_bytes b) { return {std::max(a.begin, b.begin), std::min(a.end, b.end)}; }

}  // namespace

late_commit::late_commit(std::size_t item_size, std::size_t capacity, std::size_t block_size)
    : state_(std::make_unique<detail::late_commit_state>(*this, item_size, capacity)) {
  squall::detail::require_running("xsm::late_commit");
  // commit places every node's items by one prefix sum of counts: the sizes must agree.
  detail::check_same_on_every_node(item_size, capacity, "late_commit");
  if (item_size == 0 || capacity == 0) throw usage_error("late_commit: the item size and the capacity must be > 0");
  tsm::detail::check_block_size(block_size, "late_commit");
  if (capacity > SIZE_MAX / item_size) tsm::detail::too_many_elements(capacity, item_size, "xsm::late_commit");
  const std::size_t total_bytes = item_size * capacity;
  const std::size_t whole = (total_bytes + block_size - 1) / block_size * block_size;
  const options opt{.block_size = block_size, .homes = memory::home_policy::partition()};
  state_->list = static_cast<std::byte*>(alloc_bytes(total_bytes, {range{0, whole, this}}, opt));
  auto& st = *state_;
  std::vector<std::size_t> capacity_from(static_cast<std::size_t>(nodes()),
                                         st.home_end[static_cast<std::size_t>(node())] -
                                             st.home_begin[static_cast<std::size_t>(node())]);
  st.channels = std::make_unique<channel_set>(capacity_from);
}

late_commit::~late_commit() {
  state_->channels.reset();
  // After squall::finalize the runtime has stopped for good: nothing is freed together, and the
  // list goes with the process. (xsm::free threw from here and ended it through std::terminate.)
  if (squall::initialized()) xsm::free(state_->list);
}

void late_commit::attach(block_index first, block_index end, std::size_t block_size) {
  state_->first = first;
  state_->end = end;
  state_->block_size = block_size;
  state_->copies.attach(first, end);
}

void late_commit::started(segment s) {
  auto& st = *state_;
  st.copies.started(s);
  const auto n = static_cast<std::size_t>(nodes());
  st.home_begin.assign(n, 0);
  st.home_end.assign(n, 0);
  const std::size_t list_bytes = st.item_size * st.capacity;
  for (block_index b = st.end; b-- > st.first;) {  // homes are contiguous ranges
    const auto h = static_cast<std::size_t>(s.home(b));
    st.home_begin[h] = std::min((b - st.first) * st.block_size, list_bytes);
    if (st.home_end[h] == 0) st.home_end[h] = std::min((b - st.first + 1) * st.block_size, list_bytes);
  }
}

void late_commit::read_fault(segment s, block_index b) { state_->copies.read_fault(s, b); }
void late_commit::write_fault(segment s, block_index b) { state_->copies.write_fault(s, b); }
void late_commit::on_fetch(segment s, block_index b, int from, std::uint64_t reader_completed) {
  state_->copies.on_fetch(s, b, from, reader_completed);
}
void late_commit::on_copy(segment s, block_index b, int, block_part part) { state_->copies.on_copy(s, b, part); }

void late_commit::append_bytes(std::span<const std::byte> item) {
  auto& st = *state_;
  check_item_type(item.size());
  if (st.pending.size() / st.item_size >= st.capacity) {
    throw usage_error("late_commit::append: this node already holds " + std::to_string(st.capacity) +
                      " pending items, the list's capacity");
  }
  st.pending.insert(st.pending.end(), item.begin(), item.end());
}

std::size_t late_commit::pending() const { return state_->pending.size() / state_->item_size; }
std::size_t late_commit::size() const { return state_->size; }
std::size_t late_commit::first_index() const { return state_->first_index; }
const std::byte* late_commit::data() const { return state_->list; }

void late_commit::check_item_type(std::size_t size) const {
  if (size != state_->item_size) {
    throw usage_error("late_commit: an item of " + std::to_string(size) + " bytes for a list of " +
                      std::to_string(state_->item_size) + "-byte items");
  }
}

std::size_t late_commit::commit() {
  squall::detail::require_running("xsm::late_commit::commit");
  auto& st = *state_;
  const int n = nodes(), me = node();
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(n), 0);
  counts[static_cast<std::size_t>(me)] = pending();
  allreduce(std::span<const std::uint64_t>(counts), std::span<std::uint64_t>(counts));
  std::vector<std::size_t> start(static_cast<std::size_t>(n) + 1, 0);  // in items
  for (int p = 0; p < n; ++p) start[static_cast<std::size_t>(p) + 1] = start[static_cast<std::size_t>(p)] + counts[static_cast<std::size_t>(p)];
  const std::size_t total = start.back();
  if (total > st.capacity) {
    throw usage_error("late_commit::commit: the nodes hold " + std::to_string(total) + " items, more than the list's " +
                      std::to_string(st.capacity) + " (nothing committed)");
  }
  commits.add();
  st.copies.drop_copies();
  const auto run_of = [&](int p) {
    return span_of_bytes{start[static_cast<std::size_t>(p)] * st.item_size, start[static_cast<std::size_t>(p) + 1] * st.item_size};
  };
  const auto homed_at = [&](int h) {
    return span_of_bytes{st.home_begin[static_cast<std::size_t>(h)], st.home_end[static_cast<std::size_t>(h)]};
  };
  const span_of_bytes mine = run_of(me);
  for (int h = 0; h < n; ++h) {
    const span_of_bytes part = meet(mine, homed_at(h));
    if (part.empty()) continue;
    const std::span<const std::byte> data(st.pending.data() + (part.begin - mine.begin), part.end - part.begin);
    st.channels->send_last(h, 0, data);
    if (h != me) {
      messages.add();
      bytes.add(data.size());
    }
  }
  st.channels->end_round();
  st.channels->wait_round();
  const segment s = st.copies.seg();
  for (int p = 0; p < n; ++p) {
    const span_of_bytes part = meet(run_of(p), homed_at(me));
    const auto in = st.channels->received(p);
    const std::size_t expected = part.empty() ? 0 : part.end - part.begin;
    if (in.size() != expected) {
      throw usage_error("late_commit::commit: node " + std::to_string(p) + " sent " + std::to_string(in.size()) +
                        " bytes, expected " + std::to_string(expected));
    }
    if (!in.empty()) detail::write_view(s, st.list + part.begin, in);
  }
  items_copied.add(pending());
  st.pending.clear();
  st.size = total;
  st.first_index = start[static_cast<std::size_t>(me)];
  st.copies.complete_phase();
  return total;
}

}  // namespace squall::xsm
