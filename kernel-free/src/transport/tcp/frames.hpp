// SPDX-License-Identifier: BSD-3-Clause
// The TCP transport's framing: each frame is a header (length of what follows, kind) and
// that many bytes. Reading one is pure and checked, so that a corrupt stream is an error to
// report, never a read outside the buffer (tcp_transport.cpp reports it; tests/fuzz runs it
// on arbitrary bytes).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace squall::tcp {

struct frame_header {
  std::uint32_t length;  // bytes after this header
  std::uint32_t kind;
};
// heartbeat: an idle link's sign of life. ending: the sender ends abnormally; the body is the
// node it blames (int32) and why, so that its peers name the cause, not the sender's closing.
// address: the UCX transport's set-up, a node's worker address and token (ucx_setup.cpp),
// over the connection made for it; framed so that an ending frame in its place is read.
constexpr std::uint32_t kind_packet = 1, kind_goodbye = 2, kind_heartbeat = 3, kind_ending = 4, kind_address = 5;

enum class frame_result { frame, incomplete, corrupt };

// Reads the frame at the start of `bytes`: `frame` with its header and body (the frame takes
// sizeof(frame_header) + h.length bytes); `incomplete` when more bytes are needed; `corrupt`
// (h as read) when the kind is unknown or the body longer than `max_body`.
inline frame_result read_frame(std::span<const std::byte> bytes, std::size_t max_body, frame_header& h,
                               std::span<const std::byte>& body) {
  if (bytes.size() < sizeof h) return frame_result::incomplete;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (h.length > max_body || h.kind < kind_packet || h.kind > kind_address) return frame_result::corrupt;
  if (bytes.size() - sizeof h < h.length) return frame_result::incomplete;
  body = bytes.subspan(sizeof h, h.length);
  return frame_result::frame;
}

}  // namespace squall::tcp
