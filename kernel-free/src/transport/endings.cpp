// SPDX-License-Identifier: BSD-3-Clause
#include "transport/endings.hpp"

#include <cstdint>
#include <cstring>

namespace squall {
namespace {

struct ending_head {
  std::int32_t lost;
  std::uint32_t silent_ms;
};

}  // namespace

std::vector<std::byte> ending_body(int lost_node, std::uint32_t silent_ms, const std::string& why, std::size_t max_body) {
  const ending_head head{static_cast<std::int32_t>(lost_node), silent_ms};
  std::vector<std::byte> body(sizeof head + why.size());
  std::memcpy(body.data(), &head, sizeof head);
  std::memcpy(body.data() + sizeof head, why.data(), why.size());
  if (body.size() > max_body) body.resize(max_body);
  return body;
}

void report_ending(int me, int from, int nodes, std::span<const std::byte> body, const lost_fn& lost,
                   const hears_fn& hears) {
  ending_head head{from, 0};
  std::string why;
  if (body.size() >= sizeof head) {
    std::memcpy(&head, body.data(), sizeof head);
    why.assign(reinterpret_cast<const char*>(body.data()) + sizeof head, body.size() - sizeof head);
  }
  if (head.lost < 0 || head.lost >= nodes) head.lost = from;
  if (head.lost == me) {
    lost(from, "it stopped hearing from this node (" + why + ") and ended", 0);
  } else if (head.silent_ms != 0 && head.lost != from && hears(head.lost, head.silent_ms)) {
    lost(from,
         "it stopped hearing from node " + std::to_string(head.lost) + " (" + why + "), which node " +
             std::to_string(me) + " hears, and ended",
         0);
  } else {
    lost(head.lost, why + "; said by node " + std::to_string(from) + " as it ended", head.silent_ms);
  }
}

}  // namespace squall
