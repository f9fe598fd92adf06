// SPDX-License-Identifier: BSD-3-Clause
// Building a pattern's other side collectively: each node sends each peer the list only it
// knows (what it needs from the peer, or where its contributions land there), in one
// all-to-all. A leading byte in every message says whether the sender's lists were wrong,
// so that a misuse on one node is a usage_error on every node rather than a hang.
#include <squall/pattern.hpp>

#include <squall/error.hpp>
#include <squall/runtime.hpp>

#include <cstdint>
#include <cstring>
#include <string>

#include "collectives/internal.hpp"

namespace squall {
namespace {

using lists = std::vector<std::vector<std::int64_t>>;

// Why `positions` and `partners` cannot describe a pattern, or "" if they can.
std::string problem_with(const lists& positions, const lists& partners, const char* positions_name,
                         const char* partners_name) {
  const std::size_t n = static_cast<std::size_t>(nodes());
  if (positions.size() != n || partners.size() != n) {
    return std::string("one ") + positions_name + " and one " + partners_name + " list per node is needed (" +
           std::to_string(n) + "), got " + std::to_string(positions.size()) + " and " + std::to_string(partners.size());
  }
  for (std::size_t d = 0; d < n; ++d) {
    if (positions[d].size() != partners[d].size()) {
      return std::string(positions_name) + "[" + std::to_string(d) + "] holds " + std::to_string(positions[d].size()) +
             " positions, " + partners_name + "[" + std::to_string(d) + "] " + std::to_string(partners[d].size());
    }
    for (const lists* l : {&positions, &partners}) {
      for (std::int64_t i : (*l)[d]) {
        if (i < 0) return "position " + std::to_string(i) + " for node " + std::to_string(d) + " is negative";
      }
    }
  }
  return {};
}

// Sends shared[d] to node d; returns got[s], what node s sent here (got[me] empty).
lists exchange_lists(const lists& shared, const std::string& problem, const char* api) {
  const std::size_t n = static_cast<std::size_t>(nodes()), me = static_cast<std::size_t>(node());
  std::vector<std::vector<std::byte>> out(n);
  for (std::size_t d = 0; d < n; ++d) {
    const std::size_t bytes = problem.empty() && d != me ? shared[d].size() * sizeof(std::int64_t) : 0;
    out[d].resize(1 + bytes);
    out[d][0] = std::byte{problem.empty() ? std::uint8_t{0} : std::uint8_t{1}};
    if (bytes != 0) std::memcpy(out[d].data() + 1, shared[d].data(), bytes);
  }
  const auto in = detail::exchange_bytes(std::move(out), api);
  if (!problem.empty()) throw usage_error(std::string(api) + ": " + problem);
  lists got(n);
  for (std::size_t s = 0; s < n; ++s) {
    if (s == me) continue;
    if (in[s].at(0) != std::byte{0}) {
      throw usage_error(std::string(api) + ": node " + std::to_string(s) + " passed lists that do not fit (it says why)");
    }
    got[s].resize((in[s].size() - 1) / sizeof(std::int64_t));
    if (!got[s].empty()) std::memcpy(got[s].data(), in[s].data() + 1, got[s].size() * sizeof(std::int64_t));
  }
  return got;
}

// This node's own entries as (from, to) copies; the entries are emptied.
std::vector<std::pair<std::int64_t, std::int64_t>> take_own(std::vector<std::int64_t>& from, std::vector<std::int64_t>& to) {
  std::vector<std::pair<std::int64_t, std::int64_t>> local;
  local.reserve(from.size());
  for (std::size_t i = 0; i < from.size(); ++i) local.emplace_back(from[i], to[i]);
  from.clear();
  to.clear();
  return local;
}

}  // namespace

comm_pattern pattern_from_requests(lists wanted, lists landing) {
  constexpr const char* api = "squall::pattern_from_requests";
  lists send = exchange_lists(wanted, problem_with(wanted, landing, "wanted", "landing"), api);
  const auto me = static_cast<std::size_t>(node());
  auto local = take_own(wanted[me], landing[me]);
  return pattern_from_lists(std::move(send), std::move(landing), std::move(local));
}

comm_pattern pattern_from_contributions(lists sending, lists target) {
  constexpr const char* api = "squall::pattern_from_contributions";
  lists recv = exchange_lists(target, problem_with(sending, target, "sending", "target"), api);
  const auto me = static_cast<std::size_t>(node());
  auto local = take_own(sending[me], target[me]);
  return pattern_from_lists(std::move(sending), std::move(recv), std::move(local));
}

}  // namespace squall
