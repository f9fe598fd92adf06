// SPDX-License-Identifier: BSD-3-Clause
#include <squall/xsm/node_update.hpp>

#include <algorithm>
#include <cstring>

#include <squall/am.hpp>
#include <squall/collectives.hpp>
#include <squall/error.hpp>
#include <squall/runtime.hpp>

#include "home_writes.hpp"

namespace squall::xsm {

node_update::node_update(std::size_t element_size, push_policy when) : element_size_(element_size), when_(when) {
  if (element_size == 0) throw usage_error("node-update: the element size is 0");
}
node_update::~node_update() = default;

std::string node_update::refuse_block_size(std::size_t block_size) const {
  if (block_size % element_size_ == 0) return {};
  return "node-update: blocks of " + std::to_string(block_size) + " bytes do not hold whole elements of " +
         std::to_string(element_size_) + " bytes; choose a block size that is a multiple of the element size";
}

void node_update::attach(block_index first, block_index end, std::size_t block_size) {
  if (attached_) {
    throw usage_error("node-update: this protocol object runs a range already; make one object per data structure");
  }
  attached_ = true;
  first_ = first;
  end_ = end;
  block_size_ = block_size;
  writes_ = std::make_unique<detail::home_writes>();
  writes_->attach("node-update", first, end);
  copies_.assign(end - first, copy::none);
  fetched_.clear();
  fetched_.reserve(end - first);
}

void node_update::started(segment s) {
  segment_ = s;
  if (when_ != push_policy::every_phase) return;
  // No writes are tracked: the home's blocks are writable from the start, mapped here rather
  // than at a first store's fault each (50 faults took unstructured's first phase 0.9 ms).
  const int me = squall::node();
  for (block_index b = first_; b < end_; ++b) {
    if (s.home(b) == me) detail::home_writes::write(s, b);
  }
}

void node_update::detach() {
  channel_.reset();
  writes_.reset();
  pattern_ = {};
  stage_.clear();
  send_runs_.clear();
  recv_runs_.clear();
  attached_ = false;
  segment_ = {};
}

block_index node_update::block_of_element(std::int64_t e) const {
  return first_ + static_cast<std::size_t>(e) * element_size_ / block_size_;
}

std::vector<node_update::run> node_update::runs_of(std::span<const std::int64_t> elements) const {
  std::vector<run> runs;
  std::int64_t previous = -2;
  for (const std::int64_t e : elements) {
    const block_index b = block_of_element(e);
    const std::size_t offset = static_cast<std::size_t>(e) * element_size_ % block_size_;
    if (e == previous + 1 && !runs.empty() && runs.back().block == b) {
      runs.back().bytes += element_size_;
    } else {
      runs.push_back({b, offset, element_size_});
    }
    previous = e;
  }
  return runs;
}

// --- the program's side ---

void node_update::read_fault(segment s, block_index b) {
  const int home = s.home(b);
  if (home == squall::node()) {
    detail::home_writes::read(s, b);
    return;
  }
  // A block holding no declared element: fetched, and dropped at the next phase end.
  misses.add();
  fetched_answer_ = false;
  send<&node_update::on_fetch>(home, s, b);
  am::wait_until([this] { return fetched_answer_; });
}

void node_update::write_fault(segment s, block_index b) {
  if (s.home(b) != squall::node()) {
    detail::foreign_write("node-update", s, b);
  }
  writes_->write(s, b);
}

void node_update::on_fetch(segment s, block_index b, int from) { send_block<&node_update::on_fetched>(from, s, b, true); }

void node_update::on_fetched(segment s, block_index b, int, block_part bytes) {
  bytes.install(s, b, tag::read_only);
  copies_[b - first_] = copy::fetched;
  fetched_.push_back(b);  // within the capacity reserved: a block is fetched once per phase
  fetched_answer_ = true;
}

// --- the pattern ---

void node_update::declare_reads(std::span<const std::int64_t> elements) {
  squall::detail::require_running("xsm::node_update::declare_reads");
  if (!attached_) throw usage_error("node-update: declare_reads before the memory is allocated");
  const int n = squall::nodes(), me = squall::node();
  const auto total = static_cast<std::int64_t>((end_ - first_) * block_size_ / element_size_);
  std::int64_t bad = -1;
  std::vector<std::vector<std::int64_t>> wanted(static_cast<std::size_t>(n));
  for (const std::int64_t e : elements) {
    if (e < 0 || e >= total) {
      bad = e;
      break;
    }
    const int home = segment_.home(block_of_element(e));
    if (home != me) wanted[static_cast<std::size_t>(home)].push_back(e);
  }
  // Every node learns of a mistake before the collective build, so none waits in it alone.
  const int mistakes = squall::allreduce((bad >= 0 || channel_ != nullptr) ? 1 : 0, op::sum{});
  if (channel_ != nullptr) throw usage_error("node-update: declare_reads was called twice for this data structure");
  if (bad >= 0) {
    throw usage_error("node-update: declare_reads got element " + std::to_string(bad) + ", outside the " +
                      std::to_string(total) + " elements of the range");
  }
  if (mistakes != 0) throw usage_error("node-update: declare_reads failed on another node (see its message)");

  for (auto& list : wanted) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  std::vector<std::vector<std::int64_t>> landing = wanted;  // the same index in every node's range
  pattern_ = pattern_from_requests(std::move(wanted), std::move(landing));

  std::vector<std::size_t> capacity(static_cast<std::size_t>(n), 0);
  send_runs_.assign(static_cast<std::size_t>(n), {});
  recv_runs_.assign(static_cast<std::size_t>(n), {});
  for (const peer_lists& q : pattern_.peers) {
    const auto to = static_cast<std::size_t>(q.node);
    capacity[to] = q.recv.size() * element_size_;
    send_runs_[to] = runs_of(q.send);
    recv_runs_[to] = runs_of(q.recv);
    for (const std::int64_t e : q.recv) copies_[block_of_element(e) - first_] = copy::kept;
  }
  channel_ = std::make_unique<channel_set>(capacity);
  stage_.assign(static_cast<std::size_t>(n), {});
  for (int p = 0; p < n; ++p) stage_[static_cast<std::size_t>(p)].resize(channel_->capacity_to(p));

  end_phase(true);
  for (block_index b = first_; b < end_; ++b) {
    if (copies_[b - first_] == copy::kept) segment_.set_tag(b, tag::read_only);
  }
}

// --- phase ends ---

void node_update::end_phase() {
  squall::detail::require_running("xsm::node_update::end_phase");  // (tsm::barrier checks for before_barrier)
  end_phase(false);
}

void node_update::before_barrier() { end_phase(false); }

void node_update::end_phase(bool everything) {
  // Its state is made by xsm::alloc and dropped by xsm::free.
  if (!attached_) throw usage_error("node-update: end_phase with no memory bound to the protocol (before xsm::alloc, or after xsm::free)");
  phases.add();
  const bool tracked = when_ == push_policy::when_written;
  const bool send_all = everything || !tracked;
  if (tracked) writes_->close(segment_);
  if (channel_ != nullptr) {
    for (const peer_lists& q : pattern_.peers) {
      if (q.send.empty()) continue;
      const auto to = static_cast<std::size_t>(q.node);
      const auto& runs = send_runs_[to];
      const bool changed =
          send_all || std::any_of(runs.begin(), runs.end(), [&](const run& r) { return writes_->written(r.block); });
      if (!changed) {
        channel_->end_round(q.node);
        continue;
      }
      std::byte* out = stage_[to].data();
      for (const run& r : send_runs_[to]) {
        std::memcpy(out, segment_.protocol_view(r.block).data() + r.offset, r.bytes);
        out += r.bytes;
      }
      channel_->send_last(q.node, 0, std::span<const std::byte>(stage_[to].data(), stage_[to].size()));
      pushes.add(q.send.size());
      push_messages.add();
      push_bytes.add(stage_[to].size());
    }
    channel_->wait_round();
    for (const peer_lists& q : pattern_.peers) {
      const std::span<const std::byte> in = channel_->received(q.node);
      if (in.empty()) continue;
      if (in.size() != q.recv.size() * element_size_) {
        throw usage_error("node-update: node " + std::to_string(q.node) + " pushed " + std::to_string(in.size()) +
                          " bytes, not the " + std::to_string(q.recv.size()) + " elements declared");
      }
      const std::byte* from = in.data();
      for (const run& r : recv_runs_[static_cast<std::size_t>(q.node)]) {
        std::memcpy(segment_.protocol_view(r.block).data() + r.offset, from, r.bytes);
        from += r.bytes;
      }
    }
  }
  for (const block_index b : fetched_) {
    if (copies_[b - first_] != copy::fetched) continue;
    segment_.set_tag(b, tag::invalid);
    copies_[b - first_] = copy::none;
  }
  fetched_.clear();
  if (tracked) writes_->reopen();
}

}  // namespace squall::xsm
