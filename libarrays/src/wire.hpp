// SPDX-License-Identifier: BSD-3-Clause
// libarrays' messages: one active-message handler carries them all, each a byte string of a
// fixed header, the element's key and a body. The header's generic fields mean what the
// table below says for each kind.
//
//   kind            to                 node        epoch  id        a           b          c
//   invoke          where it is known  -           -      entry     reply slot  -          -
//   insert          home               on node     -      -         -           -          -
//   create          new element's node -           ε      -         -           -          -
//   migrate         destination        -           ε      -         bcast count red count  slot   body: packed element, or the slot's bytes (in_place_flag)
//   routing_update  home / a sender    where       ε      -         -           -          -
//   deleted         home               where       ε      -         -           -          -
//   bcast_request   node 0             -           -      entry     -           -          -      body: args
//   bcast           every node         -           -      entry     serial      -          -      body: args
//   red_part        node 0             reported?   -      reducer   reduction   count      net births  body: callback + value
//   red_request     every node         -           -      -         reduction   -          -
//   red_result      every node         -           -      function  -           -          -      body: value
//   reply           the requester      -           -      -         slot        -          -      body: result
//   lb_report       node 0             -           -      -         -           -          -      body: loads and messages
//   lb_plan         every node         -           -      -         -           -          -      body: moves and the report
//   restore         home               -           -      -         file offset writer     -      body: packed element
//   free_slot       the slot's owner   -           -      -         slot        -          -
//   held            the requester      -           -      -         slot        released   -      (the home holds its request: no such element; released: no longer)
//
// `source` is the node the message is from in the protocol's sense: an invoke keeps its
// original sender through forwarding, so the delivering node can send it a routing update.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <squall/error.hpp>

namespace squall::arrays::detail {

enum class kind : std::uint8_t {
  invoke,
  insert,
  create,
  migrate,
  routing_update,
  deleted,
  bcast_request,
  bcast,
  red_part,
  red_request,
  red_result,
  reply,
  lb_report,
  lb_plan,
  restore,
  free_slot,
  held,
};

constexpr std::uint8_t forwarded_flag = 1;  // invoke: a node other than its sender passed it on
constexpr std::uint8_t failed_flag = 2;     // reply: the request failed; the body says why
constexpr std::uint8_t in_place_flag = 4;   // migrate: the body is the element's slot, as bytes
constexpr std::uint8_t short_flag = 8;      // any: the header stops before `a` (below)

// On the wire a message whose fields from `a` on hold their defaults (a one-way invoke, most
// protocol messages) carries only the header's first short_header_bytes, with short_flag
// set: a small invoke then fits the substrate's mailbox lane (kernel-free/TRANSPORTS.md).
struct header {
  kind what = kind::invoke;
  std::uint8_t flags = 0;
  std::uint16_t hops = 0;
  std::uint32_t array = 0;
  std::int32_t source = -1;
  std::uint32_t key_bytes = 0;
  std::uint64_t id = 0;
  // The short form ends here.
  std::uint64_t a = 0;
  std::int32_t node = -1;
  std::uint32_t epoch = 0;
  std::uint64_t b = 0;
  std::int64_t c = 0;
};
constexpr std::size_t short_header_bytes = offsetof(header, a);
static_assert(short_header_bytes == 24 && sizeof(header) == 56);

// Whether h goes in the short form: its fields from `a` on hold their defaults.
inline bool short_form(const header& h) {
  const header defaults;
  return h.a == defaults.a && h.node == defaults.node && h.epoch == defaults.epoch && h.b == defaults.b &&
         h.c == defaults.c;
}
inline std::size_t wire_header_bytes(const header& h) { return short_form(h) ? short_header_bytes : sizeof h; }

// Copies n bytes; the short keys and arguments of most messages without a call to memcpy
// (two overlapping fixed-size copies cover any length from 4 to 16).
inline void copy_bytes(char* to, const char* from, std::size_t n) {
  if (n >= 8 && n <= 16) {
    std::memcpy(to, from, 8);
    std::memcpy(to + n - 8, from + n - 8, 8);
  } else if (n >= 4 && n < 8) {
    std::memcpy(to, from, 4);
    std::memcpy(to + n - 4, from + n - 4, 4);
  } else if (n != 0) {
    std::memcpy(to, from, n);
  }
}

// Writes a message at p: h in its form (flags saying which, key_bytes the key's size), the key
// and the body; wire_header_bytes(h) + key.size() + body.size() bytes.
//
// The header goes field by field. Its sender has just built it field by field, and copying
// it whole would read those narrow stores back with wide loads, which cannot be forwarded
// from the store buffer and wait for the stores to retire: in a profile of the element
// message path that stall was most of this function's time.
inline void write_message(char* p, const header& h, std::string_view key, std::string_view body) {
  const auto put = [p](std::size_t at, auto v) { std::memcpy(p + at, &v, sizeof v); };
  const bool is_short = short_form(h);
  put(offsetof(header, what), h.what);
  put(offsetof(header, flags), static_cast<std::uint8_t>(is_short ? h.flags | short_flag : h.flags & ~short_flag));
  put(offsetof(header, hops), h.hops);
  put(offsetof(header, array), h.array);
  put(offsetof(header, source), h.source);
  put(offsetof(header, key_bytes), static_cast<std::uint32_t>(key.size()));
  put(offsetof(header, id), h.id);
  std::size_t head = short_header_bytes;
  if (!is_short) {
    put(offsetof(header, a), h.a);
    put(offsetof(header, node), h.node);
    put(offsetof(header, epoch), h.epoch);
    put(offsetof(header, b), h.b);
    put(offsetof(header, c), h.c);
    head = sizeof h;
  }
  copy_bytes(p + head, key.data(), key.size());
  copy_bytes(p + head + key.size(), body.data(), body.size());
}

// The entry method an invoke names, read from its bytes without the rest of the header: 0
// for another kind of message, a proxy's destroy(), or bytes too short to be a header.
inline std::uint64_t invoked_entry(std::string_view bytes) {
  if (bytes.size() < short_header_bytes) return 0;
  kind what;
  std::memcpy(&what, bytes.data() + offsetof(header, what), sizeof what);
  if (what != kind::invoke) return 0;
  std::uint64_t id = 0;
  std::memcpy(&id, bytes.data() + offsetof(header, id), sizeof id);
  return id;
}

// A message being read: views into its bytes.
struct message {
  header h;
  std::string_view key;
  std::string_view body;
};

inline message read_message(std::string_view bytes) {
  message m;
  if (bytes.size() < short_header_bytes) throw squall::usage_error("libarrays: a message shorter than its header");
  std::memcpy(static_cast<void*>(&m.h), bytes.data(), short_header_bytes);  // the rest: defaults
  std::size_t head = short_header_bytes;
  if ((m.h.flags & short_flag) != 0) {
    m.h.flags &= ~short_flag;  // the rest keeps its defaults
  } else {
    if (bytes.size() < sizeof m.h) throw squall::usage_error("libarrays: a message shorter than its header");
    std::memcpy(&m.h, bytes.data(), sizeof m.h);
    head = sizeof m.h;
  }
  if (bytes.size() - head < m.h.key_bytes) throw squall::usage_error("libarrays: a message shorter than its key");
  m.key = bytes.substr(head, m.h.key_bytes);
  m.body = bytes.substr(head + m.h.key_bytes);
  return m;
}

}  // namespace squall::arrays::detail
