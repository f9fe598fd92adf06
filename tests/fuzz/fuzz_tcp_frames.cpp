// SPDX-License-Identifier: BSD-3-Clause
// Bytes as they arrive on a TCP connection: frames are read one after the other until the
// stream is incomplete or corrupt; every frame's body must lie inside the bytes read.
#include <cstddef>
#include <cstdint>
#include <span>

#include "transport/tcp/frames.hpp"

using namespace squall::tcp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::byte> rest(reinterpret_cast<const std::byte*>(data), size);
  constexpr std::size_t max_body = 256;
  frame_header h;
  std::span<const std::byte> body;
  unsigned sum = 0;
  while (read_frame(rest, max_body, h, body) == frame_result::frame) {
    if (body.size() != h.length || body.size() > max_body || body.data() != rest.data() + sizeof h) __builtin_trap();
    for (std::byte b : body) sum += static_cast<unsigned>(b);  // ASan: inside the input
    rest = rest.subspan(sizeof h + h.length);
  }
  return static_cast<int>(sum & 0);
}
