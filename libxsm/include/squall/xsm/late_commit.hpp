// SPDX-License-Identifier: BSD-3-Clause
// late-commit append: moldyn's interaction list built without locks. Each node appends items
// to a private buffer; commit (collective) finds each node's starting index by a prefix sum of
// the counts and copies every node's items into one shared list, node 0's first.
//
//   struct pair { std::int32_t a, b; };
//   squall::xsm::late_commit list(sizeof(pair), max_pairs);   // collective: the shared list
//   for (...) if (close(i, j)) list.append(pair{i, j});        // private, no communication
//   list.commit();                                             // collective
//   for (const pair& p : list.items<pair>()) ...               // any node, until the next commit
//
// The list is memory bound to this protocol (a segment the constructor allocates), its blocks
// homed in contiguous ranges (tsm's partition policy). At commit every node learns every
// count (one allreduce of N counts), then sends each home the part of its items that falls in
// that home's blocks: one channel message per (node, home) pair whose ranges meet, exactly
// those bytes. Homes write what they receive into their blocks; any node then reads any item
// (a read-only copy fetched from the home per block, dropped at the next commit). Items are in
// node order, each node's in append order: the list is the same on every run.
//
// Errors: append past `capacity` items on one node is a usage_error at once; a commit whose
// total exceeds `capacity` is a usage_error on every node (nothing copied, the buffers kept);
// an item of the wrong size, a usage_error. A store to the list by the program ends the job.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include <squall/xsm/protocol.hpp>

namespace squall::xsm {

namespace detail {
struct late_commit_state;
}

class late_commit final : public protocol {
 public:
  // Collective: a shared list of up to `capacity` items of `item_size` bytes, in blocks of
  // `block_size` bytes (tsm::options' rules).
  late_commit(std::size_t item_size, std::size_t capacity, std::size_t block_size = 4096);
  ~late_commit() override;  // collective: frees the list (after squall::finalize, nothing)
  late_commit(const late_commit&) = delete;
  late_commit& operator=(const late_commit&) = delete;

  // This node's next item (copied into its private buffer).
  void append_bytes(std::span<const std::byte> item);
  template <class T>
  void append(const T& item) {
    static_assert(std::is_trivially_copyable_v<T>, "squall::xsm::late_commit: T must be trivially copyable");
    append_bytes(std::as_bytes(std::span<const T>(&item, 1)));
  }
  std::size_t pending() const;  // items appended since the last commit

  // Collective: the list becomes every node's pending items, node 0's first; returns its size.
  std::size_t commit();

  std::size_t size() const;         // items in the list (after the last commit)
  std::size_t first_index() const;  // where this node's items start in it
  const std::byte* data() const;    // the list (shared memory: the same address on every node)
  template <class T>
  std::span<const T> items() const {
    check_item_type(sizeof(T));
    return {reinterpret_cast<const T*>(data()), size()};
  }

  std::string_view name() const override { return "late_commit"; }
  void attach(block_index first, block_index end, std::size_t block_size) override;
  void started(segment s) override;
  void read_fault(segment s, block_index b) override;
  void write_fault(segment s, block_index b) override;

  // Routed messages (a reader's request to a home, the home's copy back).
  void on_fetch(segment s, block_index b, int from, std::uint64_t reader_completed);
  void on_copy(segment s, block_index b, int from, block_part bytes);

  protocol_counter commits{"xsm.late_commit.commits"};
  protocol_counter items_copied{"xsm.late_commit.items"};         // this node's items committed
  protocol_counter messages{"xsm.late_commit.messages"};          // channel messages to other homes
  protocol_counter bytes{"xsm.late_commit.bytes"};                // their bytes
  protocol_counter fetches{"xsm.late_commit.fetches"};            // copies this node fetched
  protocol_counter copies_sent{"xsm.late_commit.copies_sent"};    // copies this home sent

 private:
  void check_item_type(std::size_t size) const;
  std::unique_ptr<detail::late_commit_state> state_;
};

}  // namespace squall::xsm
