// SPDX-License-Identifier: BSD-3-Clause
// direct-reduction: owned blocks are read-write at their home from the start; inspect()
// makes every block holding an element this node contributes to (and does not own) a
// read-write accumulator copy, so a phase runs without a fault; end_phase() runs the
// pattern over the channels. PROTOCOLS.md describes the protocol.
#include <squall/xsm/direct_reduction.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include <squall/error.hpp>
#include <squall/runtime.hpp>

namespace squall::xsm {

namespace {

// A misuse found in a fault handler, where nothing may throw: the message, then abort (the
// launcher reports the node as lost, naming the signal).
[[noreturn]] void fail_in_fault(const char* access, block_index b, int owner, bool inspected) {
  std::fprintf(stderr,
               "squall xsm: node %d: a %s of block %zu of a direct_reduction array, owned by node %d, %s; a node "
               "reads and writes only the elements it owns and those it gave to inspect()\n",
               squall::node(), access, b, owner,
               inspected ? "which holds no element this node gave to inspect()" : "before inspect()");
  std::abort();
}

}  // namespace

direct_reduction_base::~direct_reduction_base() = default;

void direct_reduction_base::attach(block_index first, block_index end, std::size_t block_size) {
  if (attached_) {
    throw usage_error("xsm::direct_reduction: this object already runs an array; bind one object to each array");
  }
  attached_ = true;
  first_ = first;
  end_ = end;
  block_size_ = block_size;
  count_ = (end - first) * block_size / element_size_;
  accumulator_.assign(end - first, 0);
}

void direct_reduction_base::started(segment s) {
  seg_ = s;
  const int me = squall::node();
  for (block_index b = first_; b < end_; ++b) {
    if (s.home(b) == me) s.set_tag(b, tag::read_write);  // owners update their elements in place
  }
}

void direct_reduction_base::detach() {
  channels_.reset();  // end_phase leaves no round open: no node still writes to it
  pattern_.reset();
  accumulator_.clear();
  attached_ = false;
}

void direct_reduction_base::read_fault(segment s, block_index b) { fail_in_fault("read", b, s.home(b), pattern_ != nullptr); }

void direct_reduction_base::write_fault(segment s, block_index b) {
  fail_in_fault("write", b, s.home(b), pattern_ != nullptr);
}

std::byte* direct_reduction_base::array() const { return seg_.protocol_view(first_).data(); }

block_index direct_reduction_base::block_of(std::int64_t element) const {
  return first_ + static_cast<std::size_t>(element) * element_size_ / block_size_;
}

int direct_reduction_base::owner_of(std::int64_t element) const {
  // Unbound, the block size and the element count are 0: block_of divided by zero (SIGFPE).
  if (!attached_ || seg_ == segment{}) {
    throw usage_error(
        "xsm::direct_reduction::owner_of: no memory is bound to this protocol (before xsm::alloc, or after xsm::free)");
  }
  if (element < 0 || static_cast<std::size_t>(element) >= count_) {
    throw usage_error("xsm::direct_reduction::owner_of: element " + std::to_string(element) +
                      " is outside the array of " + std::to_string(count_) + " elements");
  }
  return seg_.home(block_of(element));
}

const comm_pattern& direct_reduction_base::pattern() const {
  if (!pattern_) throw usage_error("xsm::direct_reduction::pattern: inspect() has not been called");
  return *pattern_;
}

void direct_reduction_base::check_inspect(std::span<const std::int64_t> elements) const {
  if (!attached_ || seg_ == segment{}) {
    throw usage_error("xsm::direct_reduction::inspect: the object is not bound to an array (xsm::alloc)");
  }
  // An element across a change of home would be half owned: refused, the same on every node.
  for (block_index b = first_ + 1; b < end_; ++b) {
    const std::size_t boundary = (b - first_) * block_size_;
    if (seg_.home(b) != seg_.home(b - 1) && boundary % element_size_ != 0) {
      throw usage_error("xsm::direct_reduction::inspect: element " + std::to_string(boundary / element_size_) +
                        " straddles blocks " + std::to_string(b - 1) + " and " + std::to_string(b) +
                        ", homed on different nodes; give each node's elements whole blocks (a home_policy "
                        "whose changes of home fall on element boundaries)");
    }
  }
  std::optional<std::int64_t> bad;  // any value, negative ones too, is a bad index
  for (const std::int64_t e : elements) {
    if (e < 0 || static_cast<std::size_t>(e) >= count_) {
      bad = e;
      break;
    }
  }
  // Every node learns of a bad index, so none goes on into the pattern's collective alone.
  const int wrong = squall::allreduce(bad.has_value() ? 1 : 0);
  if (bad.has_value()) {
    throw usage_error("xsm::direct_reduction::inspect: element " + std::to_string(*bad) + " is outside the array of " +
                      std::to_string(count_) + " elements");
  }
  if (wrong > 0) throw usage_error("xsm::direct_reduction::inspect: another node gave an element outside the array");
}

void direct_reduction_base::inspect(std::span<const std::int64_t> elements) {
  squall::detail::require_running("xsm::direct_reduction::inspect");
  check_inspect(elements);
  const int n = squall::nodes(), me = squall::node();
  std::vector<std::int64_t> sorted(elements.begin(), elements.end());
  if (!std::is_sorted(sorted.begin(), sorted.end())) std::sort(sorted.begin(), sorted.end());  // often sorted already
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<std::vector<std::int64_t>> sending(static_cast<std::size_t>(n));
  // The home is looked up once per block, not per element: the lookup is a checked call into
  // the substrate, and 25,000 of them took unstructured's inspect 0.3 ms.
  int owner = -1;
  block_index owner_block = end_;
  for (const std::int64_t e : sorted) {
    const block_index b = block_of(e);
    if (b != owner_block) {
      owner = seg_.home(b);
      owner_block = b;
    }
    if (owner != me) sending[static_cast<std::size_t>(owner)].push_back(e);
  }
  // Contributions land at the owner on the element they are for: target = sending.
  std::vector<std::vector<std::int64_t>> target = sending;
  pattern_ = std::make_unique<comm_pattern>(pattern_from_contributions(std::move(sending), std::move(target)));

  // Accumulator copies: every block an element sent to an owner touches, from now on.
  std::size_t largest = 0;
  for (const peer_lists& q : pattern_->peers) {
    for (const std::int64_t e : q.send) {
      const std::size_t from = static_cast<std::size_t>(e) * element_size_;
      for (block_index b = from / block_size_; b <= (from + element_size_ - 1) / block_size_; ++b) {
        if (accumulator_[b] != 0) continue;
        accumulator_[b] = 1;
        seg_.set_tag(first_ + b, tag::read_write);
        accumulator_blocks.add();
      }
    }
    reset(array(), q.send.data(), q.send.size());
    largest = std::max(largest, q.send.size());
  }
  packed_.assign(largest * element_size_, std::byte{0});

  std::vector<std::size_t> capacity(static_cast<std::size_t>(n), 0);
  for (const peer_lists& q : pattern_->peers) capacity[static_cast<std::size_t>(q.node)] = q.recv.size() * element_size_;
  channels_.reset();  // end_phase leaves no round open: no node still writes to it
  channels_ = std::make_unique<channel_set>(capacity);  // collective
}

void direct_reduction_base::end_phase() {
  squall::detail::require_running("xsm::direct_reduction::end_phase");
  if (!attached_) {
    throw usage_error("xsm::direct_reduction::end_phase: no memory is bound to this protocol (before xsm::alloc, or after xsm::free)");
  }
  if (!pattern_) throw usage_error("xsm::direct_reduction::end_phase: inspect() has not been called");
  std::byte* const a = array();
  for (const peer_lists& q : pattern_->peers) {
    if (q.send.empty()) continue;
    const std::size_t size = q.send.size() * element_size_;
    take(packed_.data(), a, q.send.data(), q.send.size());
    channels_->send_last(q.node, 0, std::span<const std::byte>(packed_.data(), size));
    messages.add();
    bytes.add(size);
    elements_sent.add(q.send.size());
  }
  channels_->end_round();
  channels_->wait_round();
  for (const peer_lists& q : pattern_->peers) {  // by node: the same order on every run
    if (q.recv.empty()) continue;
    combine(a, q.recv.data(), channels_->received(q.node).data(), q.recv.size());
  }
  // The next round's credits go out when this node next sends, not now (begin_round): a
  // credit arriving while its contributor computes wakes that node's progress thread, and
  // on a node without a spare core that took 12 ms of 57 from unstructured's 50 iterations.
  phases.add();
}

}  // namespace squall::xsm
