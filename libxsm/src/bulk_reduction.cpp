// SPDX-License-Identifier: BSD-3-Clause
// bulk-reduction: pieces rotating round the ring over a channel set (bulk_reduction.hpp).
#include <squall/xsm/bulk_reduction.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <squall/channel.hpp>
#include <squall/error.hpp>
#include <squall/runtime.hpp>

#include "phase_copies.hpp"

namespace squall::xsm {

namespace detail {

struct bulk_reduction_state {
  explicit bulk_reduction_state(bulk_reduction& r) : copies("bulk_reduction", r.fetches, r.copies_sent) {}

  phase_copies<bulk_reduction> copies;
  block_index first = 0, end = 0;
  std::size_t block_size = 0;
  bool attached = false;  // between attach and detach
  std::vector<std::vector<block_index>> pieces;  // [node]: the blocks it is home to, in order
  std::unique_ptr<channel_set> channels;         // made by the first reduce (collective)
  std::vector<std::byte> piece;                  // the piece this node is combining
};

}  // namespace detail

namespace {

int ring(int n, int k) { return ((k % n) + n) % n; }

// The bytes of block b (of the range starting at `first`) within the first `total` bytes.
std::span<const std::byte> part_of(std::span<const std::byte> all, block_index b, block_index first,
                                   std::size_t block_size) {
  const std::size_t at = (b - first) * block_size;
  if (at >= all.size()) return {};
  return all.subspan(at, std::min(block_size, all.size() - at));
}

std::size_t piece_bytes(const std::vector<block_index>& blocks, std::size_t total, block_index first,
                        std::size_t block_size) {
  std::size_t bytes = 0;
  for (const block_index b : blocks) {
    const std::size_t at = (b - first) * block_size;
    if (at < total) bytes += std::min(block_size, total - at);
  }
  return bytes;
}

}  // namespace

bulk_reduction::bulk_reduction() : state_(std::make_unique<detail::bulk_reduction_state>(*this)) {}
bulk_reduction::~bulk_reduction() = default;

void bulk_reduction::attach(block_index first, block_index end, std::size_t block_size) {
  if (state_->attached) {
    throw usage_error("bulk_reduction: this protocol object runs a range already; make one object per data structure");
  }
  state_->attached = true;
  state_->first = first;
  state_->end = end;
  state_->block_size = block_size;
  state_->copies.attach(first, end);
}

void bulk_reduction::detach() { state_->attached = false; }

void bulk_reduction::started(segment s) {
  auto& st = *state_;
  st.copies.started(s);
  st.pieces.assign(static_cast<std::size_t>(nodes()), {});
  std::size_t largest = 0;
  for (block_index b = st.first; b < st.end; ++b) st.pieces[static_cast<std::size_t>(s.home(b))].push_back(b);
  for (const auto& p : st.pieces) largest = std::max(largest, p.size() * st.block_size);
  st.piece.resize(largest);
}

void bulk_reduction::read_fault(segment s, block_index b) { state_->copies.read_fault(s, b); }
void bulk_reduction::write_fault(segment s, block_index b) { state_->copies.write_fault(s, b); }

void bulk_reduction::on_fetch(segment s, block_index b, int from, std::uint64_t reader_completed) {
  state_->copies.on_fetch(s, b, from, reader_completed);
}
void bulk_reduction::on_copy(segment s, block_index b, int, block_part part) { state_->copies.on_copy(s, b, part); }

void bulk_reduction::run(std::span<const std::byte> local, std::size_t element_size, const void* op,
                         combine_fn combine) {
  squall::detail::require_running("xsm::bulk_reduction::reduce");
  auto& st = *state_;
  if (!st.attached || st.pieces.empty()) {
    throw usage_error("bulk_reduction::reduce: no memory is bound to this protocol (before xsm::alloc, or after xsm::free)");
  }
  const std::size_t bound_bytes = (st.end - st.first) * st.block_size;
  if (st.block_size % element_size != 0) {
    throw usage_error("bulk_reduction::reduce: elements of " + std::to_string(element_size) +
                      " bytes do not divide the block size (" + std::to_string(st.block_size) +
                      "), so an element could straddle two pieces");
  }
  if (local.size() > bound_bytes) {
    throw usage_error("bulk_reduction::reduce: a contribution of " + std::to_string(local.size()) +
                      " bytes is longer than the " + std::to_string(bound_bytes) + " bytes bound to the protocol");
  }
  reductions.add();
  st.copies.drop_copies();
  const int n = nodes(), me = node();
  const segment s = st.copies.seg();
  const auto bytes_of = [&](int q) {
    return piece_bytes(st.pieces[static_cast<std::size_t>(q)], local.size(), st.first, st.block_size);
  };
  // Adds this node's contribution to piece q, held in st.piece (op(held, mine), element-wise).
  const auto add_mine = [&](int q) {
    std::size_t at = 0;
    for (const block_index b : st.pieces[static_cast<std::size_t>(q)]) {
      const auto mine = part_of(local, b, st.first, st.block_size);
      combine(op, st.piece.data() + at, mine.data(), mine.size() / element_size);
      at += mine.size();
    }
  };
  const auto copy_mine = [&](int q) {
    std::size_t at = 0;
    for (const block_index b : st.pieces[static_cast<std::size_t>(q)]) {
      const auto mine = part_of(local, b, st.first, st.block_size);
      if (!mine.empty()) std::memcpy(st.piece.data() + at, mine.data(), mine.size());
      at += mine.size();
    }
  };

  if (n > 1 && !st.channels) {
    std::vector<std::size_t> capacity(static_cast<std::size_t>(n), 0);
    capacity[static_cast<std::size_t>(ring(n, me - 1))] = st.piece.size();
    st.channels = std::make_unique<channel_set>(capacity);
  }
  // Step k: this node passes piece me - 1 - k to the right; it receives piece me - 2 - k.
  for (int k = 0; k < n - 1; ++k) {
    const int q = ring(n, me - 1 - k);
    if (k == 0) copy_mine(q);  // else st.piece holds what came from the left, mine added
    const std::size_t size = bytes_of(q);
    st.channels->send_last(ring(n, me + 1), 0, std::span<const std::byte>(st.piece.data(), size));
    messages.add();
    bytes.add(size);
    st.channels->wait_round();
    const int next = ring(n, me - 2 - k);
    const auto in = st.channels->received(ring(n, me - 1));
    if (in.size() != bytes_of(next)) {
      throw usage_error("bulk_reduction::reduce: node " + std::to_string(ring(n, me - 1)) + " passed " +
                        std::to_string(in.size()) + " bytes of piece " + std::to_string(next) + ", expected " +
                        std::to_string(bytes_of(next)) + " (the nodes' contributions differ in length)");
    }
    if (!in.empty()) std::memcpy(st.piece.data(), in.data(), in.size());
    add_mine(next);
  }
  if (n == 1) copy_mine(me);
  // st.piece is the total of this node's piece: into its blocks.
  std::size_t at = 0;
  for (const block_index b : st.pieces[static_cast<std::size_t>(me)]) {
    const std::size_t size = part_of(local, b, st.first, st.block_size).size();
    if (size > 0) std::memcpy(s.protocol_view(b).data(), st.piece.data() + at, size);
    at += size;
  }
  st.copies.complete_phase();
}

}  // namespace squall::xsm
