// SPDX-License-Identifier: BSD-3-Clause
// Communication patterns: the description of one irregular exchange step, for the layers
// that move array elements between nodes (CHAOS's schedules and remaps, libxsm's direct
// reduction). A pattern says, per peer, which positions of a local array this node packs
// for it and where that peer's elements land here, in the same order on both sides, plus
// the copies that stay within this node. It moves nothing itself: each layer runs it with
// its own messages (at most one per pair per step), packing and unpacking with the typed
// helpers below.
//
// The receive side is found collectively, once, from what each node knows itself:
//
//   // This node needs elements 4 and 9 of node 1's array, into its slots 100 and 101.
//   std::vector<std::vector<std::int64_t>> wanted(squall::nodes()), landing(squall::nodes());
//   wanted[1] = {4, 9};
//   landing[1] = {100, 101};
//   squall::comm_pattern p = squall::pattern_from_requests(wanted, landing);  // collective
//   // Now node 1's pattern has a peer this node whose send list is {4, 9}, and this
//   // node's has a peer 1 whose recv list is {100, 101}. Running it forwards:
//   auto* bytes = reinterpret_cast<std::byte*>(values.data());  // a std::vector<double>
//   for (const squall::peer_lists& q : p.peers) {
//     std::vector<std::byte> out(q.send.size() * sizeof(double));
//     squall::pack_elements<double>(out.data(), bytes, q.send.data(), q.send.size());
//     // ... send `out` to q.node; where it arrives (from `source`, n elements at `in`):
//     // squall::unpack_elements<double>(bytes, p.peer(source)->recv.data(), in, n);
//   }
//
// pattern_from_contributions is the other direction (a node knows where its elements land
// at the peer: direct reduction to owners). Positions are offsets into a node's own array;
// turning global indices into (owner, offset) is the caller's business (CHAOS's
// translation tables).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace squall {

// What this node exchanges with one peer: send[i] is packed i-th into the message to the
// peer, and the i-th element of the peer's message lands at recv[i].
struct peer_lists {
  int node = -1;
  std::vector<std::int64_t> send;
  std::vector<std::int64_t> recv;
};

struct comm_pattern {
  std::vector<peer_lists> peers;  // only peers with something to send or receive, by node
  std::vector<std::pair<std::int64_t, std::int64_t>> local;  // (from, to) copies within this node
  // The largest position sent from (peers' send, local's from) and received into (recv,
  // local's to), -1 if none: the arrays a run is given must be longer. Set by finish_bounds.
  std::int64_t highest_send = -1, highest_recv = -1;

  void finish_bounds();                 // recomputes the two bounds from the lists
  const peer_lists* peer(int node) const;  // nullptr if this node exchanges nothing with it
};

// Not collective. The pattern with send[d] and recv[d] as the lists for node d (one entry
// per node, empty where nothing goes that way; this node's own entries must be empty: its
// copies are `local`). Bounds finished. Wrong sizes are a usage_error.
comm_pattern pattern_from_lists(std::vector<std::vector<std::int64_t>> send,
                                std::vector<std::vector<std::int64_t>> recv,
                                std::vector<std::pair<std::int64_t, std::int64_t>> local = {});

// Collective (every node calls it). wanted[d]: positions in node d's array this node needs;
// landing[d]: where each lands here (same length). Node d learns its send list to this node.
// This node's own entries become local copies (wanted[me][i] -> landing[me][i]). Lists not
// one per node, or of different lengths, are a usage_error on every node.
comm_pattern pattern_from_requests(std::vector<std::vector<std::int64_t>> wanted,
                                   std::vector<std::vector<std::int64_t>> landing);

// Collective. sending[d]: positions here this node packs for node d; target[d]: where each
// lands at node d (same length). Node d learns its recv list from this node. Own entries
// become local copies (sending[me][i] -> target[me][i]). Errors as pattern_from_requests.
comm_pattern pattern_from_contributions(std::vector<std::vector<std::int64_t>> sending,
                                        std::vector<std::vector<std::int64_t>> target);

// Copies between an array of T and a packed run by a list of positions. Instantiated per
// element type, so each element is copied with its size known at compile time; the byte
// signature lets an executor keep them as plain function pointers for any type.
using pack_fn = void (*)(std::byte* out, const std::byte* array, const std::int64_t* where, std::size_t n);
using unpack_fn = void (*)(std::byte* array, const std::int64_t* where, const std::byte* in, std::size_t n);

// out[i] = array[where[i]], for i < n.
template <class T>
void pack_elements(std::byte* out, const std::byte* array, const std::int64_t* where, std::size_t n) {
  const T* a = reinterpret_cast<const T*>(array);
  for (std::size_t i = 0; i < n; ++i) std::memcpy(out + i * sizeof(T), &a[where[i]], sizeof(T));
}
// array[where[i]] = in[i], for i < n.
template <class T>
void unpack_elements(std::byte* array, const std::int64_t* where, const std::byte* in, std::size_t n) {
  T* a = reinterpret_cast<T*>(array);
  for (std::size_t i = 0; i < n; ++i) std::memcpy(&a[where[i]], in + i * sizeof(T), sizeof(T));
}

}  // namespace squall
