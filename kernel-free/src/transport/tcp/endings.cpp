// SPDX-License-Identifier: BSD-3-Clause
#include "transport/tcp/endings.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace squall::tcp {

std::vector<std::byte> ending_body(int lost_node, const std::string& why, std::size_t max_body) {
  std::vector<std::byte> body(sizeof(std::int32_t) + why.size());
  const auto lost = static_cast<std::int32_t>(lost_node);
  std::memcpy(body.data(), &lost, sizeof lost);
  std::memcpy(body.data() + sizeof lost, why.data(), why.size());
  if (body.size() > max_body) body.resize(max_body);
  return body;
}

void report_ending(int me, int from, int nodes, std::span<const std::byte> body,
                   const std::function<void(int node, const std::string& why)>& lost) {
  std::int32_t blamed = from;
  if (body.size() >= sizeof blamed) std::memcpy(&blamed, body.data(), sizeof blamed);
  if (blamed < 0 || blamed >= nodes) blamed = from;
  const std::size_t at = std::min(body.size(), sizeof blamed);
  const std::string why(reinterpret_cast<const char*>(body.data()) + at, body.size() - at);
  if (blamed == me) {
    lost(from, "it stopped hearing from this node (" + why + ") and ended");
    return;
  }
  lost(blamed, why + "; said by node " + std::to_string(from) + " as it ended");
}

}  // namespace squall::tcp
