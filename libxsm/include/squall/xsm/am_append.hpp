// SPDX-License-Identifier: BSD-3-Clause
// active-message append: DSMC's moving particles. A node appends an item to another node's
// receive buffer with one active message, whose handler writes it there: handlers run one at a
// time, so appends from many nodes to one buffer need no lock. end_phase (collective) returns
// once every append sent to this node before it, by any node, has landed; a read of another
// node's buffer waits, at that node, until its own have (one allreduce of the senders'
// per-destination counts ends the phase: no fence).
//
//   squall::xsm::am_append moved(sizeof(particle), max_per_node);    // collective
//   for (particle& p : mine) if (owner(p) != me) moved.append(owner(p), p);
//   moved.end_phase();                                               // collective
//   for (const particle& p : moved.received<particle>(me)) insert(p);
//
// Each node has a receive buffer of `capacity` items per phase in memory bound to this
// protocol (a segment the constructor allocates), homed at that node: the handler writes
// through the home's protocol view. Any node may read any node's buffer after end_phase (a
// read-only copy fetched from the home per block, dropped at its next end_phase); shared
// rather than private so a node can look at what its neighbours received, as a DSMC cell
// sweep across a partition boundary does, with no message of the program's own. There are
// two sets of buffers, used in alternate phases: the items of phase k stay readable while
// phase k + 1's appends land, until end_phase of phase k + 1.
//
// The appends leave packed: while a phase has appended to another node, until its end_phase,
// the node sends at least 16 active messages to a packet (am::set_aggregation; end_phase
// restores the program's factor and so sends what waits).
//
// Order in a buffer: one sender's items in its append order; different senders' items
// interleaved in arrival order (not the same from run to run).
//
// Overflow is found at the receiver: a handler that finds its buffer full drops the item and
// counts it; end_phase then throws usage_error on every node, naming each node that
// received more than `capacity` items and how many (the buffers keep the first `capacity`).
// An item of the wrong size, or a bad node, is a usage_error at the sender. A store to the
// buffers by the program ends the job with a message.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>

#include <squall/am.hpp>
#include <squall/xsm/protocol.hpp>

namespace squall::xsm {

namespace detail {
struct am_append_state;
}

class am_append final : public protocol {
 public:
  // Collective: a receive buffer of `capacity` items of `item_size` bytes for every node, in
  // blocks of `block_size` bytes.
  am_append(std::size_t item_size, std::size_t capacity, std::size_t block_size = 4096);
  ~am_append() override;  // collective: frees the buffers (after squall::finalize, nothing)
  am_append(const am_append&) = delete;
  am_append& operator=(const am_append&) = delete;

  // Appends an item to node dest's receive buffer (this node included).
  void append_bytes(int dest, std::span<const std::byte> item);
  template <class T>
  void append(int dest, const T& item) {
    static_assert(std::is_trivially_copyable_v<T>, "squall::xsm::am_append: T must be trivially copyable");
    append_bytes(dest, std::as_bytes(std::span<const T>(&item, 1)));
  }

  // Collective: every append sent before it has landed; the phase's items are readable.
  void end_phase();

  // After end_phase: the items node `owner` received in the phase that ended (any node reads them).
  std::size_t received_count(int owner) const;
  const std::byte* received_data(int owner) const;
  template <class T>
  std::span<const T> received(int owner) const {
    check_item_type(sizeof(T));
    return {reinterpret_cast<const T*>(received_data(owner)), received_count(owner)};
  }

  std::string_view name() const override { return "am_append"; }
  void attach(block_index first, block_index end, std::size_t block_size) override;
  void started(segment s) override;
  void read_fault(segment s, block_index b) override;
  void write_fault(segment s, block_index b) override;

  // Routed messages: an item for this node's buffer of the sender's phase (its low byte: the
  // sender is in this node's phase or the next); a reader's request to a home and the home's
  // copy back.
  void on_item(segment s, block_index b, int from, std::uint8_t phase, am::payload item);
  void on_fetch(segment s, block_index b, int from, std::uint64_t reader_completed);
  void on_copy(segment s, block_index b, int from, block_part bytes);

  protocol_counter appends{"xsm.am_append.appends"};              // append calls (to this node too)
  protocol_counter messages{"xsm.am_append.messages"};            // of those, to other nodes
  protocol_counter bytes{"xsm.am_append.bytes"};                  // their bytes
  protocol_counter items_received{"xsm.am_append.items_received"};  // handled here (overflow included)
  protocol_counter fetches{"xsm.am_append.fetches"};              // copies this node fetched
  protocol_counter copies_sent{"xsm.am_append.copies_sent"};      // copies this home sent

 private:
  void check_item_type(std::size_t size) const;
  std::unique_ptr<detail::am_append_state> state_;
};

}  // namespace squall::xsm
