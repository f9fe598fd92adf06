// SPDX-License-Identifier: BSD-3-Clause
// A home directory for the blocks a protocol runs: per block, the node holding it writable
// (the owner), the nodes holding read copies (the sharers), the request in progress and the
// requests waiting for it to end. Stache's home side is written on it; so can any protocol
// with a home per block.
//
//   home_directory dir(first, end, squall::nodes());  // in attach: every entry idle
//   if (dir.busy(b)) { dir.defer(b, from, write); return; }
//   dir.start(b, from, write);  ... dir.add_expected_answer(b) ...
//   if (dir.answer(b)) { ...complete...; dir.finish(b); if (auto w = dir.next_waiting(b)) ... }
//
// Everything is allocated at construction; nothing allocates afterwards (handlers may run on
// the SIGBUS path). The queue holds up to `queue_capacity` requests (default: one per node,
// enough when each node has one request in flight at a time); one more is a protocol bug
// and ends the job with a message.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <squall/memory.hpp>

namespace squall::tsm {

class home_directory {
 public:
  struct request {
    memory::block_index block = 0;
    int node = -1;
    bool write = false;
  };

  home_directory() = default;
  // For blocks [first, end), `nodes` nodes.
  home_directory(memory::block_index first, memory::block_index end, int nodes, std::size_t queue_capacity = 0);

  // The owner: the node holding the block writable, or -1.
  int owner(memory::block_index b) const { return entry(b).owner; }
  void set_owner(memory::block_index b, int node) { entry(b).owner = node; }

  bool is_sharer(memory::block_index b, int node) const;
  void set_sharer(memory::block_index b, int node, bool on);
  void clear_sharers(memory::block_index b);
  // No owner and no sharer: no node, the home included, holds a copy.
  bool held_by_nobody(memory::block_index b) const;
  // Calls f(node) for each sharer, lowest node first.
  template <class F>
  void for_each_sharer(memory::block_index b, F&& f) const {
    const std::uint64_t* w = words_of(b);
    for (std::size_t i = 0; i < words_; ++i) {
      for (std::uint64_t bits = w[i]; bits != 0; bits &= bits - 1) f(static_cast<int>(i * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))));
    }
  }

  // The request in progress (busy: answers are still expected for it).
  bool busy(memory::block_index b) const { return entry(b).requester >= 0; }
  const request current(memory::block_index b) const { return {b, entry(b).requester, entry(b).write}; }
  void start(memory::block_index b, int node, bool write);
  void expect_answer(memory::block_index b) { ++entry(b).answers; }
  // One expected answer arrived; true when it was the last.
  bool answer(memory::block_index b);
  std::uint32_t answers_expected(memory::block_index b) const { return entry(b).answers; }
  void finish(memory::block_index b) { entry(b).requester = -1; }

  // Requests that found their block busy, served oldest first.
  void defer(memory::block_index b, int node, bool write);
  // The oldest request waiting for block b, taken off the queue; none if nothing waits.
  std::optional<request> next_waiting(memory::block_index b);
  std::size_t waiting() const { return queue_.size(); }

  // The bytes a directory keeps per block for `nodes` nodes (for checking a size first).
  static std::size_t bytes_per_block(int nodes);

 private:
  struct entry_t {
    std::int32_t owner = -1;
    std::int32_t requester = -1;
    std::uint32_t answers = 0;
    bool write = false;
  };
  entry_t& entry(memory::block_index b) { return entries_[b - first_]; }
  const entry_t& entry(memory::block_index b) const { return entries_[b - first_]; }
  std::uint64_t* words_of(memory::block_index b) { return sharers_.data() + (b - first_) * words_; }
  const std::uint64_t* words_of(memory::block_index b) const { return sharers_.data() + (b - first_) * words_; }

  memory::block_index first_ = 0;
  std::size_t words_ = 0;  // sharer bitmap words per block
  std::vector<entry_t> entries_;
  std::vector<std::uint64_t> sharers_;
  std::vector<request> queue_;  // capacity reserved up front
};

}  // namespace squall::tsm
