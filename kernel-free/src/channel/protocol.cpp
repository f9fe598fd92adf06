// SPDX-License-Identifier: BSD-3-Clause
// The channel protocol's handlers: data copied into the preset buffer, end of round, credits.
// They allocate nothing; the registry holds the sets alive.
#include <algorithm>
#include <cstring>
#include <vector>

#include "channel/state.hpp"
#include "common/log.hpp"

namespace squall::detail {
namespace {

// Guarded by the node lock. Never destroyed: the progress thread may run a handler while an
// exiting process destroys statics. The sets alive (a few: searched in order), by id; ids
// are never reused, so a late message for a destroyed set is never taken for a new one. A
// list of every id ever made grew 8 bytes a set for the job's life (libxsm protocols make
// one per construction or inspection).
struct registered {
  std::uint32_t id;
  channel_state* set;
};
auto& sets = *new std::vector<registered>;
std::uint32_t next_id = 0;

channel_state& find_set(std::uint32_t id, int src, const char* what) {
  for (const registered& r : sets) {
    if (r.id == id) return *r.set;
  }
  if (id >= next_id) fatal("channel %s from node %d for channel set #%u, which this node never made", what, src, id);
  fatal("channel %s from node %d for channel set #%u, which this node has destroyed (every node must "
        "run the same rounds)", what, src, id);
}

}  // namespace

namespace channel_protocol {

void on_data(am::token& t, std::uint32_t id, std::uint64_t round, std::uint64_t offset, bool last,
             am::payload data) {
  channel_state& s = find_set(id, t.source(), "data");
  if (round != s.round.load(std::memory_order_relaxed)) {
    fatal("channel set #%u: node %d sent round %llu while this node is in round %llu", id, t.source(),
          static_cast<unsigned long long>(round), static_cast<unsigned long long>(s.round.load()));
  }
  channel_in& in = s.in[t.source()];
  if (offset > in.capacity || data.size() > in.capacity - offset) {
    fatal("channel set #%u: node %d wrote past its %zu bytes", id, t.source(), in.capacity);
  }
  if (!data.empty()) std::memcpy(in.buffer + offset, data.data(), data.size());
  in.extent = std::max<std::size_t>(in.extent, offset + data.size());
  if (last) in.ended_through.store(round + 1, std::memory_order_release);
}

void on_credit(am::token& t, std::uint32_t id, std::uint64_t round) {
  channel_state& s = find_set(id, t.source(), "credit");
  s.out[t.source()].granted.store(round, std::memory_order_release);
}

}  // namespace channel_protocol

std::uint32_t register_channel_set(channel_state* s) {
  sets.push_back({next_id, s});
  return next_id++;
}

void unregister_channel_set(std::uint32_t id) {
  std::erase_if(sets, [id](const registered& r) { return r.id == id; });
}

void send_channel_data(const channel_state& s, int dest, std::size_t offset, am::payload data, bool last) {
  // Pieces of at most max_payload(): each is copied once, by its handler, into the buffer.
  const std::size_t piece = am::max_payload();
  const std::uint64_t round = s.round.load(std::memory_order_relaxed);
  std::size_t done = 0;
  do {
    const std::size_t k = std::min(piece, data.size() - done);
    const bool final_piece = done + k == data.size();
    am::send<&channel_protocol::on_data>(dest, s.id, round, std::uint64_t{offset + done},
                                         last && final_piece, data.subspan(done, k));
    done += k;
  } while (done < data.size());
}

void send_channel_credit(const channel_state& s, int dest) {
  am::send<&channel_protocol::on_credit>(dest, s.id, s.round.load(std::memory_order_relaxed));
}

}  // namespace squall::detail
