// SPDX-License-Identifier: BSD-3-Clause
// active-message append: one routed message per item, written by its handler into the
// receiver's buffer. A phase ends by counts, not by a fence: the senders' per-destination
// counts, summed in one allreduce, tell each node how many items to wait for (am_append.hpp).
#include <squall/xsm/am_append.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <squall/collectives.hpp>
#include <squall/error.hpp>
#include <squall/runtime.hpp>
#include <squall/xsm.hpp>

#include "phase_copies.hpp"

namespace squall::xsm {

namespace detail {

struct am_append_state {
  am_append_state(am_append& a, std::size_t item, std::size_t cap)
      : copies("am_append", a.fetches, a.copies_sent), item_size(item), capacity(cap) {}

  phase_copies<am_append> copies;
  std::size_t item_size, capacity;
  int me = 0, n = 1;             // this node and the nodes, as at construction
  std::size_t buffer_bytes = 0;  // one buffer, whole blocks
  std::byte* base = nullptr;
  block_index first = 0;  // the buffers' first block
  std::uint64_t phase = 0;              // this node's phase (the number of end_phase calls)
  std::uint64_t arrived[2] = {0, 0};    // items handled here, per buffer set (phase % 2)
  std::vector<std::uint64_t> sent;      // [node]: items this node sent it in this phase
  std::vector<std::uint64_t> counts;    // [node]: items it received in the phase that ended
  bool coalescing = false;              // this phase has sent an append to another node
};

}  // namespace detail

namespace {

std::size_t index_of(int node) { return static_cast<std::size_t>(node); }

// A phase's appends go out packed, at least this many to a packet (am::set_aggregation) from
// the first append to another node until end_phase: with DSMC's ~800 appends a step to one
// neighbour, the exchange took 0.85-0.93 of its time so (2 x 7 alternated runs, 2 nodes).
constexpr unsigned appends_per_packet = 16;

// The node's phases with appends in flight, over every am_append object, and the factor to
// restore when the last of them ends. Touched only on the program's thread, like the object.
int coalescing_phases = 0;
unsigned aggregation_before = 1;

void begin_coalescing() {
  if (coalescing_phases++ != 0) return;
  aggregation_before = am::aggregation();
  if (aggregation_before < appends_per_packet) am::set_aggregation(appends_per_packet);
}

void end_coalescing() {
  if (--coalescing_phases != 0) return;
  if (am::aggregation() != aggregation_before) am::set_aggregation(aggregation_before);  // sends what waits
}

}  // namespace

am_append::am_append(std::size_t item_size, std::size_t capacity, std::size_t block_size)
    : state_(std::make_unique<detail::am_append_state>(*this, item_size, capacity)) {
  squall::detail::require_running("xsm::am_append");
  auto& st = *state_;
  st.me = node();
  st.n = nodes();
  // A receiver writes an item at its index times its own item size: the sizes must agree.
  detail::check_same_on_every_node(item_size, capacity, "am_append");
  if (item_size == 0 || capacity == 0) throw usage_error("am_append: the item size and the capacity must be > 0");
  tsm::detail::check_block_size(block_size, "am_append");
  if (item_size > am::max_payload()) {
    throw usage_error("am_append: items of " + std::to_string(item_size) + " bytes exceed one message (" +
                      std::to_string(am::max_payload()) + " bytes)");
  }
  if (capacity > SIZE_MAX / item_size / 2 / static_cast<std::size_t>(nodes())) {
    tsm::detail::too_many_elements(capacity, item_size, "xsm::am_append");
  }
  st.buffer_bytes = (item_size * capacity + block_size - 1) / block_size * block_size;
  const std::size_t total_bytes = 2 * static_cast<std::size_t>(nodes()) * st.buffer_bytes;
  const std::size_t blocks_per_buffer = st.buffer_bytes / block_size;
  const int n = nodes();
  const options opt{.block_size = block_size, .homes = memory::home_policy::function([blocks_per_buffer, n](block_index b) {
                      return static_cast<int>((b / blocks_per_buffer) % static_cast<std::size_t>(n));
                    })};
  st.base = static_cast<std::byte*>(alloc_bytes(total_bytes, {range{0, total_bytes, this}}, opt));
  st.counts.assign(index_of(n), 0);
  st.sent.assign(index_of(n), 0);
}

am_append::~am_append() {
  // After squall::finalize the runtime has stopped for good: nothing is freed together, and the
  // buffers go with the process. (xsm::free threw from here and ended it through std::terminate.)
  if (!squall::initialized()) return;
  if (state_->coalescing) end_coalescing();
  xsm::free(state_->base);
}

void am_append::attach(block_index first, block_index end, std::size_t) {
  state_->first = first;
  state_->copies.attach(first, end);
}
void am_append::started(segment s) { state_->copies.started(s); }
void am_append::read_fault(segment s, block_index b) { state_->copies.read_fault(s, b); }
void am_append::write_fault(segment s, block_index b) { state_->copies.write_fault(s, b); }
void am_append::on_fetch(segment s, block_index b, int from, std::uint64_t reader_completed) {
  state_->copies.on_fetch(s, b, from, reader_completed);
}
void am_append::on_copy(segment s, block_index b, int, block_part part) { state_->copies.on_copy(s, b, part); }

void am_append::check_item_type(std::size_t size) const {
  if (size != state_->item_size) {
    throw usage_error("am_append: an item of " + std::to_string(size) + " bytes for buffers of " +
                      std::to_string(state_->item_size) + "-byte items");
  }
}

// Per item: the one check that the runtime runs is this call's own (the node and the count
// of nodes are the object's).
void am_append::append_bytes(int dest, std::span<const std::byte> item) {
  squall::detail::require_running("xsm::am_append::append");
  auto& st = *state_;
  check_item_type(item.size());
  if (dest < 0 || dest >= st.n) {
    throw usage_error("am_append::append: node " + std::to_string(dest) + " does not exist (" +
                      std::to_string(st.n) + " nodes)");
  }
  const segment s = st.copies.seg();
  const std::size_t set = st.phase % 2;
  const block_index b = s.block_of(st.base + (set * index_of(st.n) + index_of(dest)) * st.buffer_bytes);
  if (dest != st.me && !st.coalescing) {
    begin_coalescing();
    st.coalescing = true;
  }
  // The phase's low byte: a message carries 8 bytes of address and 1 of phase beside the item
  // (the whole phase made DSMC's 56-byte particles 72 bytes on the wire instead of 65).
  send<&am_append::on_item>(dest, s, b, static_cast<std::uint8_t>(st.phase), item);
  ++st.sent[index_of(dest)];
  appends.add();
  if (dest != st.me) {
    messages.add();
    bytes.add(item.size());
  }
}

void am_append::on_item(segment s, block_index, int from, std::uint8_t phase, am::payload item) {
  auto& st = *state_;
  const auto here = static_cast<std::uint8_t>(st.phase);
  if (phase != here && phase != static_cast<std::uint8_t>(here + 1)) {
    std::fprintf(stderr, "squall xsm: am_append: node %d appended in a phase ending in byte %u, this node is in phase %llu\n",
                 from, static_cast<unsigned>(phase), static_cast<unsigned long long>(st.phase));
    std::abort();
  }
  const std::size_t set = phase % 2;  // as the whole phase's: 256 is even
  const std::uint64_t at = st.arrived[set]++;
  items_received.add();
  if (at >= st.capacity) return;  // overflow: counted, reported by end_phase
  // The segment, not st.base: an append may arrive before this node's constructor has returned.
  const std::byte* buffer = s.address_of(st.first) + (set * index_of(nodes()) + index_of(node())) * st.buffer_bytes;
  detail::write_view(s, buffer + at * st.item_size, item);
}

void am_append::end_phase() {
  squall::detail::require_running("xsm::am_append::end_phase");
  auto& st = *state_;
  if (st.coalescing) {
    st.coalescing = false;
    end_coalescing();
  }
  st.copies.drop_copies();
  // counts[p]: the items every node sent p in this phase. One allreduce, where a fence would
  // take two waves at least and a second collective the counts.
  std::vector<std::uint64_t> counts(index_of(nodes()), 0);
  allreduce(std::span<const std::uint64_t>(st.sent), std::span<std::uint64_t>(counts));
  std::fill(st.sent.begin(), st.sent.end(), 0);
  // Wait for this node's own. Another node's buffer may still be filling: a read of it waits
  // at that home until its end_phase completes (phase_copies). A sender already in the next
  // phase appends to the other set; it cannot be two phases ahead, since it has passed this
  // phase's allreduce, to which this node has not yet contributed for the next one.
  const std::size_t set = st.phase % 2;
  const std::uint64_t expected = counts[index_of(node())];
  // The wait's condition runs under the node lock, once true never again: it also frees the
  // set for phase + 2's items and moves the node to the next phase, where a handler's checks
  // of the phase see it.
  am::wait_until([&st, set, expected] {
    if (st.arrived[set] < expected) return false;
    st.arrived[set] = 0;
    ++st.phase;
    return true;
  });
  std::string overflow;
  for (int p = 0; p < nodes(); ++p) {
    std::uint64_t& c = counts[index_of(p)];
    if (c <= st.capacity) continue;
    overflow += (overflow.empty() ? "" : ", ") + std::string("node ") + std::to_string(p) + " received " +
                std::to_string(c);
    c = st.capacity;
  }
  st.counts = counts;
  st.copies.complete_phase();
  if (!overflow.empty()) {
    throw usage_error("am_append::end_phase: receive buffers overflowed (" + overflow + " items, capacity " +
                      std::to_string(st.capacity) + "; the first " + std::to_string(st.capacity) + " kept)");
  }
}

// What this node knows (as late_commit's items): no runtime call, so none to name.
std::size_t am_append::received_count(int owner) const {
  if (owner < 0 || owner >= state_->n) throw usage_error("am_append::received: node " + std::to_string(owner) + " does not exist");
  return state_->counts[index_of(owner)];
}

const std::byte* am_append::received_data(int owner) const {
  const auto& st = *state_;
  const std::size_t set = (st.phase + 1) % 2;  // the phase that ended last
  return st.base + (set * index_of(st.n) + index_of(owner)) * st.buffer_bytes;
}

}  // namespace squall::xsm
