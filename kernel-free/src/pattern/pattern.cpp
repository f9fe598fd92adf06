// SPDX-License-Identifier: BSD-3-Clause
// A communication pattern's bounds and lookups, and the pattern made of given lists.
#include <squall/pattern.hpp>

#include <squall/error.hpp>
#include <squall/runtime.hpp>

#include <algorithm>
#include <string>

namespace squall {

void comm_pattern::finish_bounds() {
  highest_send = highest_recv = -1;
  for (const auto& q : peers) {
    for (std::int64_t i : q.send) highest_send = std::max(highest_send, i);
    for (std::int64_t i : q.recv) highest_recv = std::max(highest_recv, i);
  }
  for (const auto& [from, to] : local) {
    highest_send = std::max(highest_send, from);
    highest_recv = std::max(highest_recv, to);
  }
}

const peer_lists* comm_pattern::peer(int node) const {
  for (const auto& q : peers) {
    if (q.node == node) return &q;
  }
  return nullptr;
}

comm_pattern pattern_from_lists(std::vector<std::vector<std::int64_t>> send, std::vector<std::vector<std::int64_t>> recv,
                                std::vector<std::pair<std::int64_t, std::int64_t>> local) {
  constexpr const char* api = "squall::pattern_from_lists";
  const int n = nodes(), me = node();
  if (send.size() != static_cast<std::size_t>(n) || recv.size() != static_cast<std::size_t>(n)) {
    throw usage_error(std::string(api) + ": one send and one recv list per node is needed (" + std::to_string(n) +
                      "), got " + std::to_string(send.size()) + " and " + std::to_string(recv.size()));
  }
  if (!send[static_cast<std::size_t>(me)].empty() || !recv[static_cast<std::size_t>(me)].empty()) {
    throw usage_error(std::string(api) + ": this node's own send and recv lists must be empty (its copies go in `local`)");
  }
  comm_pattern p;
  p.local = std::move(local);
  for (int d = 0; d < n; ++d) {
    auto& s = send[static_cast<std::size_t>(d)];
    auto& r = recv[static_cast<std::size_t>(d)];
    if (s.empty() && r.empty()) continue;
    p.peers.push_back({d, std::move(s), std::move(r)});
  }
  p.finish_bounds();
  const bool negative = std::ranges::any_of(p.peers, [](const peer_lists& q) {
    return std::ranges::any_of(q.send, [](std::int64_t i) { return i < 0; }) ||
           std::ranges::any_of(q.recv, [](std::int64_t i) { return i < 0; });
  }) || std::ranges::any_of(p.local, [](const auto& c) { return c.first < 0 || c.second < 0; });
  if (negative) throw usage_error(std::string(api) + ": a position is negative");
  return p;
}

}  // namespace squall
