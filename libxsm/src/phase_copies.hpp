// SPDX-License-Identifier: BSD-3-Clause
// Reading what a phase produced, shared by the libxsm protocols that fill their memory
// themselves in collective phases (bulk_reduction, late_commit, am_append).
//
// Each block's bytes live in its home's protocol view, written there by the protocol. Between
// phases any node reads any block: the home reads its own in place (tag ReadOnly), another node
// fetches a read-only copy (one request to the home, one reply carrying the block). A node drops
// its copies when it begins the next phase. A request carries how many phases the reader has
// completed; a home that has not completed as many yet (it is still finishing the phase the
// reader has left) answers when it has. The program never writes this memory: a store ends the
// job with a message naming the protocol.
//
// P is the protocol class; it forwards its routed messages on_fetch and on_copy here.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <squall/am.hpp>
#include <squall/collectives.hpp>
#include <squall/error.hpp>
#include <squall/runtime.hpp>
#include <squall/xsm/protocol.hpp>

namespace squall::xsm::detail {

// Collective, first in a constructor (before any check one node alone could fail): a
// usage_error on every node unless every node gave the same item size and capacity.
inline void check_same_on_every_node(std::uint64_t item_size, std::uint64_t capacity, const char* protocol) {
  const auto r = squall::range_over_nodes(std::array<std::uint64_t, 2>{item_size, capacity});
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (r[i].same()) continue;
    throw usage_error(std::string(protocol) + (i == 0 ? ": the item size" : ": the capacity") + " differs between nodes (" +
                      std::to_string(r[i].lowest) + " on some, " + std::to_string(r[i].highest) +
                      " on others); every node must give the same");
  }
}

// Writes `data` at `at` (inside segment s) through the protocol view, block by block.
inline void write_view(segment s, const std::byte* at, std::span<const std::byte> data) {
  const std::size_t block_size = s.block_size();
  while (!data.empty()) {
    const block_index b = s.block_of(at);
    const std::size_t in_block = static_cast<std::size_t>(at - s.address_of(b));
    const std::size_t n = std::min(data.size(), block_size - in_block);
    std::memcpy(s.protocol_view(b).data() + in_block, data.data(), n);
    data = data.subspan(n);
    at += n;
  }
}

template <class P>
class phase_copies {
 public:
  phase_copies(const char* protocol_name, protocol_counter& fetches, protocol_counter& copies_sent)
      : name_(protocol_name), fetches_(fetches), copies_sent_(copies_sent) {}

  void attach(block_index first, block_index end) {
    first_ = first;
    end_ = end;
    nodes_ = static_cast<std::size_t>(nodes());
    waiting_.assign((end - first) * nodes_, 0);  // allocated here: handlers never allocate
  }
  void started(segment s) { segment_ = s; }
  segment seg() const { return segment_; }
  std::uint64_t completed() const { return completed_; }

  // Program thread, as this node begins a phase: its copies of other homes' blocks go.
  void drop_copies() {
    const int me = node();
    for (block_index b = first_; b < end_; ++b) {
      if (segment_.home(b) != me && segment_.tag_of(b) != tag::invalid) segment_.set_tag(b, tag::invalid);
    }
  }

  // Program thread, once this node's blocks hold the phase's bytes: the phase is complete
  // here, and readers that asked too early get their copies.
  void complete_phase() {
    am::run_locked([](void* c) { static_cast<phase_copies*>(c)->serve_waiting(); }, this);
  }

  void read_fault(segment s, block_index b) {
    if (s.home(b) == node()) {
      s.set_tag(b, tag::read_only);
      return;
    }
    fetches_.add();
    arrived_ = false;
    send<&P::on_fetch>(s.home(b), s, b, completed_);
    am::wait_until([this] { return arrived_; });
  }

  [[noreturn]] void write_fault(segment s, block_index b) const {
    std::fprintf(stderr,
                 "squall xsm: %s: the program stored to block %zu at %p, which only the protocol writes "
                 "(its memory is read-only to the program)\n",
                 name_, b, static_cast<void*>(s.address_of(b)));
    std::abort();
  }

  // Handlers (under the node lock).
  void on_fetch(segment s, block_index b, int from, std::uint64_t reader_completed) {
    if (completed_ >= reader_completed) {
      reply(s, b, from);
      return;
    }
    if (reader_completed > completed_ + 1) {
      std::fprintf(stderr, "squall xsm: %s: node %d asked for block %zu after %llu phases, this home has %llu\n",
                   name_, from, b, static_cast<unsigned long long>(reader_completed),
                   static_cast<unsigned long long>(completed_));
      std::abort();
    }
    waiting_[(b - first_) * nodes_ + static_cast<std::size_t>(from)] = 1;
    ++waiting_count_;
  }
  void on_copy(segment s, block_index b, block_part bytes) {
    bytes.install(s, b, tag::read_only);
    arrived_ = true;
  }

 private:
  void reply(segment s, block_index b, int to) {
    copies_sent_.add();
    send_block<&P::on_copy>(to, s, b, true);
  }

  void serve_waiting() {
    ++completed_;
    if (waiting_count_ == 0) return;
    for (block_index b = first_; b < end_; ++b) {
      for (std::size_t n = 0; n < nodes_; ++n) {
        std::uint8_t& w = waiting_[(b - first_) * nodes_ + n];
        if (w == 0) continue;
        w = 0;
        reply(segment_, b, static_cast<int>(n));
      }
    }
    waiting_count_ = 0;
  }

  const char* name_;
  protocol_counter& fetches_;
  protocol_counter& copies_sent_;
  segment segment_;
  block_index first_ = 0, end_ = 0;
  std::size_t nodes_ = 0;
  std::vector<std::uint8_t> waiting_;  // [block][node]: a reader waits for this phase's bytes
  std::size_t waiting_count_ = 0;
  std::uint64_t completed_ = 0;  // phases this node has completed
  bool arrived_ = false;         // the copy a read fault waits for is installed
};

}  // namespace squall::xsm::detail
