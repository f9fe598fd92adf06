// SPDX-License-Identifier: BSD-3-Clause
// Protocol messages: active messages whose handler is a member function of a protocol class
// (squall/tsm/protocol.hpp), delivered to the object that runs the block on the receiving
// node.
//
//   struct my_protocol final : squall::tsm::protocol {
//     void on_request(segment s, block_index b, int from, bool write);       // a message
//     void on_data(segment s, block_index b, int from, block_part bytes, bool write);
//     ...
//   };
//   tsm::send<&my_protocol::on_request>(home, s, b, true);
//   tsm::send_block<&my_protocol::on_data>(to, s, b, true, write);  // the block's bytes too
//   // in on_data: bytes.install(s, b, tag::read_write);
//
// A handler's parameters: the segment and block the message is for, the sending node, then
// (block messages) the block_part, then its own arguments, by value and trivially copyable
// (a trailing am::payload allowed in plain messages). Handlers follow the rules of
// squall/am.hpp (one at a time, under the node lock; they may send but not wait). Messages
// name a block by its address, the same on every node; the receiver checks that a live
// segment holds it and that the protocol running it is of the handler's class.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include <squall/am.hpp>
#include <squall/tsm/protocol.hpp>

namespace squall::tsm {

// A block's bytes as a block message brings them: its last part (all of it for a block
// that fits one message; none when sent without bytes) at `offset` of the block. Earlier
// parts were written to the protocol view by messages that arrived first.
struct block_part {
  std::uint64_t offset = 0;
  am::payload bytes;

  bool empty() const { return bytes.empty(); }
  // Writes the part into the block's protocol view.
  void store(segment s, block_index b) const;
  // Writes it and sets the tag; a whole block in one part is installed in one step.
  void install(segment s, block_index b, tag t) const;
};

namespace detail {

struct located {
  segment s;
  block_index b;
  protocol* p;
};
// The block at `address` and the protocol running it, checked to be of class `expected`;
// usage_error naming `handler` otherwise (the engine reports it as the handler's failure).
located locate(std::uintptr_t address, const std::type_info& expected);

inline std::uintptr_t address_of(segment s, block_index b) { return reinterpret_cast<std::uintptr_t>(s.address_of(b)); }

// Sends all but the last part of the block's protocol-view bytes to `dest` as fill messages
// (none when `with_bytes` is false) and returns the last part, which goes with the message
// that completes the step; messages between two nodes arrive in order.
block_part send_leading_parts(segment s, block_index b, int dest, bool with_bytes);

// Routed messages are registered under their member function's name.
template <auto M>
struct member_name {
  static constexpr std::string_view name() { return am::detail::handler_name<M>(); }
};

template <auto M, class Signature = decltype(M)>
struct route;
template <auto M, class P, class... A>
struct route<M, void (P::*)(segment, block_index, int, A...)> {
  static_assert(std::is_base_of_v<protocol, P>, "squall::tsm::send: the handler must be a member of a tsm::protocol class");
  static void handle(am::token& t, std::uintptr_t address, std::decay_t<A>... a) {
    const located at = locate(address, typeid(P));
    (static_cast<P*>(at.p)->*M)(at.s, at.b, t.source(), a...);
  }
};

template <auto M, class Signature = decltype(M)>
struct block_route;
template <auto M, class P, class... A>
struct block_route<M, void (P::*)(segment, block_index, int, block_part, A...)> {
  static_assert(std::is_base_of_v<protocol, P>, "squall::tsm::send_block: the handler must be a member of a tsm::protocol class");
  static void handle(am::token& t, std::uintptr_t address, std::decay_t<A>... a, std::uint64_t offset, am::payload bytes) {
    const located at = locate(address, typeid(P));
    (static_cast<P*>(at.p)->*M)(at.s, at.b, t.source(), block_part{offset, bytes}, a...);
  }
};

}  // namespace detail

// Sends a message for block b of s to `dest` (this node included), handled by the member M
// of the protocol object running that block there.
template <auto M, class... A>
void send(int dest, segment s, block_index b, A&&... args) {
  am::send_named<&detail::route<M>::handle, detail::member_name<M>>(dest, detail::address_of(s, b), std::forward<A>(args)...);
}

// The same for a handler taking a block_part: the block's protocol-view bytes travel with
// the message when `with_bytes` (in parts, for a block larger than am::max_payload()).
template <auto M, class... A>
void send_block(int dest, segment s, block_index b, bool with_bytes, A&&... args) {
  const block_part last = detail::send_leading_parts(s, b, dest, with_bytes);
  am::send_named<&detail::block_route<M>::handle, detail::member_name<M>>(dest, detail::address_of(s, b), std::forward<A>(args)..., last.offset,
                                            last.bytes);
}

}  // namespace squall::tsm
