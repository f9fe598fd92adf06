// SPDX-License-Identifier: BSD-3-Clause
// Bytes as they arrive on a TCP connection: frames are read one after the other until the
// stream is incomplete or corrupt; every frame's body must lie inside the bytes read, and an
// ending frame's must name a node of the job.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "transport/endings.hpp"
#include "transport/tcp/frames.hpp"

using namespace squall::tcp;
using squall::report_ending;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::byte> rest(reinterpret_cast<const std::byte*>(data), size);
  constexpr std::size_t max_body = 256;
  frame_header h;
  std::span<const std::byte> body;
  unsigned sum = 0;
  while (read_frame(rest, max_body, h, body) == frame_result::frame) {
    if (body.size() != h.length || body.size() > max_body || body.data() != rest.data() + sizeof h) __builtin_trap();
    for (std::byte b : body) sum += static_cast<unsigned>(b);  // ASan: inside the input
    if (h.kind == kind_ending) {
      constexpr int nodes = 4;
      report_ending(
          0, 1, nodes, body,
          [&](int node, const std::string& why, std::uint32_t) {
            if (node < 0 || node >= nodes) __builtin_trap();
            sum += static_cast<unsigned>(why.size());
          },
          [](int node, std::uint32_t) { return node % 2 == 0; });
    }
    rest = rest.subspan(sizeof h + h.length);
  }
  return static_cast<int>(sum & 0);
}
