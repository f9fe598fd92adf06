// SPDX-License-Identifier: BSD-3-Clause
// Collectives on the active-message layer. Every node calls each collective, in the same
// order; a node that calls a different one is reported (not hung).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

namespace squall {

void barrier();

// Returns when every active message sent anywhere before the fence, and every message
// those handlers sent in turn (transitively), has been handled (ARMI's rmi_fence).
void fence();

// The sum of every node's numbers, in split phases, for a layer that must keep serving
// while the nodes add up (libarrays' quiesce runs its scheduler meanwhile, so that a node
// still waiting for one of its elements is answered). A collective like the others: every
// node begins it at the same point of its sequence of collectives, and a node that called
// another collective there is reported. The constructor begins it; progress() takes the
// steps whose messages are here and returns whether the sum is complete (then result());
// ready() says whether progress() has something to do, and may be asked from an
// am::wait_until predicate. Every node sends to node 0, which sends the sum to every node.
class allreduce_sum {
 public:
  explicit allreduce_sum(std::span<const std::uint64_t> mine);
  ~allreduce_sum();
  allreduce_sum(const allreduce_sum&) = delete;
  allreduce_sum& operator=(const allreduce_sum&) = delete;
  bool ready() const;
  bool progress();
  std::span<const std::uint64_t> result() const;

 private:
  struct state;
  std::unique_ptr<state> s_;
};

namespace op {
struct sum {
  template <class T>
  T operator()(const T& a, const T& b) const { return a + b; }
};
struct min {
  template <class T>
  T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
struct max {
  template <class T>
  T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
}  // namespace op

namespace detail {
// Combines `count` elements of `in` into `inout` (both byte images of T[count]).
using combine_fn = std::function<void(std::byte* inout, const std::byte* in, std::size_t count)>;
void broadcast_bytes(void* data, std::size_t bytes, int root);
// How many collectives this node has begun (finalize's included) and the kind of the last
// ("none" before any). Safe from handlers: a layer with operations of its own that every
// node calls in program order (CHAOS) uses it to tell whether a node has gone past one.
struct collective_position {
  std::uint64_t begun;
  const char* last;
};
collective_position collectives_position();
// `out_count`: how many elements `out` holds (at least `count` where the result is written).
void reduce_bytes(const void* in, void* out, std::size_t count, std::size_t out_count, std::size_t elem_size,
                  const combine_fn& combine, int root, bool all);

template <class T, class Op>
combine_fn elementwise(Op op) {
  return [op](std::byte* inout, const std::byte* in, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      T a, b;
      std::memcpy(&a, inout + i * sizeof(T), sizeof(T));
      std::memcpy(&b, in + i * sizeof(T), sizeof(T));
      a = op(a, b);
      std::memcpy(inout + i * sizeof(T), &a, sizeof(T));
    }
  };
}
}  // namespace detail

// Copies root's `data` into every node's `data`.
template <class T>
void broadcast(std::span<T> data, int root = 0) {
  static_assert(std::is_trivially_copyable_v<T>);
  detail::broadcast_bytes(data.data(), data.size_bytes(), root);
}
template <class T>
void broadcast(T& value, int root = 0) {
  broadcast(std::span<T>(&value, 1), root);
}

// Element-wise reduction of every node's `in` into root's `out` with `op`, an associative
// binary function (T, T) -> T. Contributions are combined in node order 0, 1, ..., so `op`
// need not be commutative. `out` is untouched on the other nodes.
template <class T, class Op = op::sum>
void reduce(std::span<const T> in, std::span<T> out, Op op = {}, int root = 0) {
  static_assert(std::is_trivially_copyable_v<T>);
  detail::reduce_bytes(in.data(), out.data(), in.size(), out.size(), sizeof(T), detail::elementwise<T>(op),
                       root, false);
}

// Like reduce, with the result in every node's `out` (in and out may be the same memory).
template <class T, class Op = op::sum>
void allreduce(std::span<const T> in, std::span<T> out, Op op = {}) {
  static_assert(std::is_trivially_copyable_v<T>);
  detail::reduce_bytes(in.data(), out.data(), in.size(), out.size(), sizeof(T), detail::elementwise<T>(op), 0,
                       true);
}

template <class T, class Op = op::sum>
T allreduce(const T& value, Op op = {}) {
  T out{};
  allreduce(std::span<const T>(&value, 1), std::span<T>(&out, 1), op);
  return out;
}

// The smallest and the largest of the nodes' values, element by element, in one allreduce
// (the largest of each value and of its complement): a layer checking that every node gave
// the same sizes or counts compares the two.
struct value_range {
  std::uint64_t lowest, highest;
  bool same() const { return lowest == highest; }
};
template <std::size_t N>
std::array<value_range, N> range_over_nodes(const std::array<std::uint64_t, N>& mine) {
  std::array<std::uint64_t, 2 * N> in{}, out{};
  for (std::size_t i = 0; i < N; ++i) {
    in[2 * i] = mine[i];
    in[2 * i + 1] = ~mine[i];
  }
  allreduce(std::span<const std::uint64_t>(in), std::span<std::uint64_t>(out), op::max{});
  std::array<value_range, N> r{};
  for (std::size_t i = 0; i < N; ++i) r[i] = {~out[2 * i + 1], out[2 * i]};
  return r;
}

}  // namespace squall
