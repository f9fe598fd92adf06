// SPDX-License-Identifier: BSD-3-Clause
// All-to-all exchange of byte buffers, the irregular collective the library's set-up phases
// (translation tables, inspector, remap, partitioners, scatter_append) are built on.
#pragma once
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>
#include <string>
#include <vector>

namespace squall::chaos {

// Collective. outgoing[d] (one entry per node, may be empty) goes to node d; returns
// incoming[s], what node s sent here. Exactly one message per non-empty buffer (a bulk
// transfer when it is large); receivers learn what to expect from one allreduce of counts.
std::vector<std::vector<std::byte>> exchange(std::vector<std::vector<std::byte>> outgoing);

// Split-phase form: exchange_begin agrees on the counts (a blocking allreduce) and sends;
// end() waits for what comes here. Destroying a handle that was not ended ends it. Ending one
// that was moved from is a usage_error (the one it was moved into holds the exchange).
class exchange_handle {
 public:
  exchange_handle();
  exchange_handle(exchange_handle&&) noexcept;
  exchange_handle& operator=(exchange_handle&&) noexcept;
  ~exchange_handle();
  // incoming[s]; callable once. `api` names the handle in errors (a wrapper's name).
  std::vector<std::vector<std::byte>> end(const char* api = "chaos::exchange_handle");

  struct state;
  explicit exchange_handle(std::unique_ptr<state> s);

 private:
  std::unique_ptr<state> s_;
  bool moved_from_ = false;
};
exchange_handle exchange_begin(std::vector<std::vector<std::byte>> outgoing);

namespace detail {
// exchange_begin, with this node's problem with its input (empty: none) agreed on in the same
// allreduce as the counts: when any node has one, every node throws usage_error ("api: " and
// its own problem, or a note that another node found its input invalid) and nothing is sent,
// so that bad input on one node does not leave the others in an exchange it never joins.
exchange_handle exchange_begin_checked(std::vector<std::vector<std::byte>> outgoing, const std::string& problem,
                                       const char* api);
}  // namespace detail

// Typed form: outgoing[d] is a vector of T.
template <class T>
std::vector<std::vector<T>> exchange(const std::vector<std::vector<T>>& outgoing) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::vector<std::vector<std::byte>> raw(outgoing.size());
  for (std::size_t d = 0; d < outgoing.size(); ++d) {
    raw[d].resize(outgoing[d].size() * sizeof(T));
    if (!raw[d].empty()) std::memcpy(raw[d].data(), outgoing[d].data(), raw[d].size());
  }
  auto in = exchange(std::move(raw));
  std::vector<std::vector<T>> out(in.size());
  for (std::size_t s = 0; s < in.size(); ++s) {
    out[s].resize(in[s].size() / sizeof(T));
    if (!out[s].empty()) std::memcpy(out[s].data(), in[s].data(), out[s].size() * sizeof(T));
  }
  return out;
}

// Collective. Every node's `mine`, concatenated in node order, on every node.
int exchange_nodes();  // the number of nodes (squall::nodes())

template <class T>
std::vector<T> allgather(std::span<const T> mine) {
  const std::vector<T> copy(mine.begin(), mine.end());
  const std::vector<std::vector<T>> out(static_cast<std::size_t>(exchange_nodes()), copy);
  std::vector<T> all;
  for (const auto& part : exchange(out)) all.insert(all.end(), part.begin(), part.end());
  return all;
}

}  // namespace squall::chaos
