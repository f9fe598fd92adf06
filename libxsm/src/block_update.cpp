// SPDX-License-Identifier: BSD-3-Clause
#include <squall/xsm/block_update.hpp>

#include <cstring>

#include <squall/am.hpp>
#include <squall/error.hpp>
#include <squall/runtime.hpp>

#include "home_writes.hpp"

namespace squall::xsm {

// The home side: which nodes read each block homed here, and the messages of a phase end.
struct block_update::home_state {
  detail::home_writes writes;
  home_directory recorded;  // consumers found in the recording phase: on the channel
  home_directory late;      // consumers found afterwards: one block message per push
  std::vector<std::vector<std::byte>> stage;  // per consumer: this phase's message
  std::vector<std::size_t> fill;
  std::span<const block_index> written;  // this phase's, while packing
  std::uint64_t direct_sent = 0, direct_done = 0;  // pushes as block messages, and their answers
};

namespace {
constexpr std::size_t block_number_bytes = sizeof(std::uint64_t);
}

block_update::block_update(unsigned recording_barriers) : recording_barriers_(recording_barriers) {
  if (recording_barriers == 0) throw usage_error("block-update: the recording must last at least one barrier");
}
block_update::~block_update() = default;

std::string block_update::refuse_block_size(std::size_t block_size) const {
  if (block_size <= largest_block) return {};
  return "block-update takes blocks of at most " + std::to_string(largest_block) +
         " bytes (a push copies a whole block to each node that reads it); this memory has blocks of " +
         std::to_string(block_size) + " bytes";
}

void block_update::attach(block_index first, block_index end, std::size_t block_size) {
  if (home_ != nullptr) {
    throw usage_error("block-update: this protocol object runs a range already; make one object per data structure");
  }
  const int n = squall::nodes();
  home_ = std::make_unique<home_state>();
  home_->writes.attach("block-update", first, end);
  home_->recorded = home_directory(first, end, n);
  home_->late = home_directory(first, end, n);
  home_->stage.resize(static_cast<std::size_t>(n));
  home_->fill.assign(static_cast<std::size_t>(n), 0);
  first_ = first;
  end_ = end;
  block_size_ = block_size;
  consumed_from_.assign(static_cast<std::size_t>(n), 0);
  barriers_ = 0;
  recording_.store(true);
}

void block_update::detach() {
  channel_.reset();
  home_.reset();
  segment_ = {};
}

// --- the program's side ---

void block_update::read_fault(segment s, block_index b) {
  const int home = s.home(b);
  if (home == squall::node()) {
    detail::home_writes::read(s, b);
    return;
  }
  misses.add();
  if (!recording()) misses_after_recording.add();
  granted_.store(false);
  send<&block_update::on_request>(home, s, b);
  am::wait_until([this] { return granted_.load(); });
}

void block_update::write_fault(segment s, block_index b) {
  if (s.home(b) != squall::node()) {
    detail::foreign_write("block-update", s, b);
  }
  home_->writes.write(s, b);
}

// --- misses ---

void block_update::on_request(segment s, block_index b, int from) {
  requests_served.add();
  if (recording()) {
    home_->recorded.set_sharer(b, from, true);
  } else if (!home_->recorded.is_sharer(b, from) && !home_->late.is_sharer(b, from)) {
    home_->late.set_sharer(b, from, true);
    late_consumers.add();
  }
  send_block<&block_update::on_grant>(from, s, b, true);
}

void block_update::on_grant(segment s, block_index b, int home, block_part bytes) {
  bytes.install(s, b, tag::read_only);
  if (recording()) ++consumed_from_[static_cast<std::size_t>(home)];
  granted_.store(true);
}

// --- phase ends ---

void block_update::before_barrier() {
  phases.add();
  if (++barriers_ == recording_barriers_) end_recording();
  home_->written = home_->writes.close(segment_);
  am::run_locked(pack_locked, this);  // the consumer sets change in handlers
  if (channel_ != nullptr) send_channel_round();
  am::wait_until([this] { return home_->direct_done == home_->direct_sent; });
  home_->writes.reopen();
}

void block_update::send_channel_round() {
  for (int p = 0; p < squall::nodes(); ++p) {
    if (channel_->capacity_to(p) == 0) continue;
    const auto to = static_cast<std::size_t>(p);
    if (home_->fill[to] == 0) {
      channel_->end_round(p);
      continue;
    }
    channel_->send_last(p, 0, std::span<const std::byte>(home_->stage[to].data(), home_->fill[to]));
    push_messages.add();
    push_bytes.add(home_->fill[to]);
    home_->fill[to] = 0;
  }
  channel_->wait_round();
  install_received();
}

void block_update::end_recording() {
  // Every node has finished its first phase once the collective channel set exists, so no
  // recording-phase request is still on the way.
  std::vector<std::size_t> capacity(consumed_from_.size());
  for (std::size_t p = 0; p < capacity.size(); ++p) capacity[p] = consumed_from_[p] * (block_number_bytes + block_size_);
  channel_ = std::make_unique<channel_set>(capacity);
  recording_.store(false);
  for (int p = 0; p < squall::nodes(); ++p) home_->stage[static_cast<std::size_t>(p)].resize(channel_->capacity_to(p));
}

void block_update::pack_locked(void* self) {
  auto& me = *static_cast<block_update*>(self);
  home_state& h = *me.home_;
  for (const block_index b : h.written) {
    const std::span<const std::byte> bytes = me.segment_.protocol_view(b);
    const auto direct = [&](int c) {
      send_block<&block_update::on_push>(c, me.segment_, b, true);
      ++h.direct_sent;
      me.pushes.add();
      me.push_messages.add();
      me.push_bytes.add(bytes.size());
    };
    h.recorded.for_each_sharer(b, [&](int c) {
      if (me.channel_ == nullptr) return direct(c);  // still recording: no channel yet
      const auto to = static_cast<std::size_t>(c);
      const std::uint64_t number = b;
      std::memcpy(h.stage[to].data() + h.fill[to], &number, block_number_bytes);
      std::memcpy(h.stage[to].data() + h.fill[to] + block_number_bytes, bytes.data(), bytes.size());
      h.fill[to] += block_number_bytes + bytes.size();
      me.pushes.add();
    });
    h.late.for_each_sharer(b, direct);
  }
}

void block_update::install_received() {
  const std::size_t entry = block_number_bytes + block_size_;
  for (int p = 0; p < squall::nodes(); ++p) {
    const std::span<const std::byte> in = channel_->received(p);
    for (std::size_t at = 0; at + entry <= in.size(); at += entry) {
      std::uint64_t b = 0;
      std::memcpy(&b, in.data() + at, block_number_bytes);
      if (b < first_ || b >= end_) {
        throw usage_error("block-update: node " + std::to_string(p) + " pushed block " + std::to_string(b) +
                          ", outside the blocks this protocol runs");
      }
      segment_.install(b, in.subspan(at + block_number_bytes, block_size_), tag::read_only);
    }
  }
}

void block_update::on_push(segment s, block_index b, int home, block_part bytes) {
  bytes.install(s, b, tag::read_only);
  send<&block_update::on_push_done>(home, s, b);
}

void block_update::on_push_done(segment, block_index, int) { ++home_->direct_done; }

}  // namespace squall::xsm
