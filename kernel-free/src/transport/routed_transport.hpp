// SPDX-License-Identifier: BSD-3-Clause
// Chooses a transport per pair of nodes: shared memory to nodes on this host, TCP to the
// others. The message layer above sees one transport and never asks which one carried a
// packet.
#pragma once
#include <algorithm>
#include <vector>

#include "transport/transport.hpp"

namespace squall {

class routed_transport final : public transport {
 public:
  // far[node]: whether `node` is reached through `remote` rather than `local`.
  routed_transport(transport& local, transport& remote, std::vector<bool> far)
      : local_(local), remote_(remote), far_(std::move(far)) {}

  bool try_send(int dest, std::span<const std::byte> head, std::span<const std::byte> body) override {
    return to(dest).try_send(dest, head, body);
  }
  bool try_send_written(int dest, std::span<const std::byte> head, std::size_t body_size,
                        body_writer write) override {
    return to(dest).try_send_written(dest, head, body_size, write);
  }
  bool sends_large(int dest) const override { return far_[dest] ? remote_.sends_large(dest) : local_.sends_large(dest); }
  bool try_send_large(int dest, std::span<const std::byte> head, std::span<const std::byte> data,
                      void (*done)(void*), void* ctx) override {
    return to(dest).try_send_large(dest, head, data, done, ctx);
  }
  std::span<const std::byte> peek(int src) override { return to(src).peek(src); }
  void release(int src) override { to(src).release(src); }
  bool any_incoming() override { return local_.any_incoming() || remote_.any_incoming(); }
  bool worth_polling() override { return local_.worth_polling() || remote_.any_incoming(); }
  bool any_queued() override { return local_.any_incoming() || remote_.any_queued(); }
  bool moving_data() override { return local_.moving_data() || remote_.moving_data(); }
  void nudge_peers() override { local_.nudge_peers(); }
  void poke_stalled_peers() override { local_.poke_stalled_peers(); }
  void node_sleeps() override {
    local_.node_sleeps();
    remote_.node_sleeps();
  }
  void node_polls() override { remote_.node_polls(); }
  std::size_t max_packet() const override { return std::min(local_.max_packet(), remote_.max_packet()); }
  shm::shm_transport* mailbox_lane(int peer) override { return to(peer).mailbox_lane(peer); }

 private:
  transport& to(int node) { return far_[node] ? remote_ : local_; }
  transport& local_;
  transport& remote_;
  std::vector<bool> far_;
};

}  // namespace squall
