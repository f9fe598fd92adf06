// SPDX-License-Identifier: BSD-3-Clause
// Reducers and callbacks: what an element's contribute() combines its value with, and where
// the result goes.
//
//   contribute(energy, arrays::sum<double>(), arrays::on_root<&report>());
//   contribute(std::vector<int>{hits}, arrays::concat<int>(), arrays::to_all<&Cell::done>(cells));
//
// Every element of the array contributes exactly once to each reduction (the paper's section
// 5.2), with the same reducer and callback; the result reaches the callback once. An element
// inserted on a node while that node still collects a reduction owes it a value too, as in
// Charm++. A reduction to which no element contributed (all were deleted first) has no value,
// and its callback does not run.
#pragma once
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <squall/arrays/codec.hpp>
#include <squall/arrays/registry.hpp>
#include <squall/error.hpp>

namespace squall::arrays {

template <class R>
struct reducer {
  std::uint64_t id = 0;
};

namespace detail {

template <class R, class Op>
struct builtin_reducer {
  static void combine(std::string& out, std::span<const std::string> in) {
    auto [acc] = decode<R>(in[0], "a reduction value");
    for (std::size_t i = 1; i < in.size(); ++i) {
      auto [b] = decode<R>(in[i], "a reduction value");
      acc = Op{}(std::move(acc), b);
    }
    out.clear();
    encode_into(out, acc);
  }
  static inline const std::uint64_t id =
      add_reducer(fnv1a(type_name<builtin_reducer>()), type_name<builtin_reducer>(), &combine, type_id<R>());
};

struct plus_op {
  template <class R>
  R operator()(R a, const R& b) const {
    if constexpr (requires { a.size(); a[0]; }) {  // element by element, for vectors and arrays
      if (a.size() != b.size()) {
        throw squall::usage_error("libarrays: a sum was given vectors of " + std::to_string(a.size()) + " and " +
                                  std::to_string(b.size()) + " values: every element contributes one of the same length");
      }
      for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
      return a;
    } else {
      return a + b;
    }
  }
};
struct min_op {
  template <class R>
  R operator()(R a, const R& b) const { return std::min(a, b); }
};
struct max_op {
  template <class R>
  R operator()(R a, const R& b) const { return std::max(a, b); }
};
struct concat_op {
  template <class R>
  R operator()(R a, const R& b) const {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
};

template <auto F>
struct member_args;
template <class R>
struct value_of_function;
template <class R>
struct value_of_function<void (*)(R)> {
  using type = std::decay_t<R>;
};
template <class R>
struct value_of_function<void (*)(R&, const R&)> {
  using type = R;
};

template <auto F>
struct user_reducer {
  using R = typename value_of_function<decltype(F)>::type;
  static void combine(std::string& out, std::span<const std::string> in) {
    auto [acc] = decode<R>(in[0], "a reduction value");
    for (std::size_t i = 1; i < in.size(); ++i) {
      auto [b] = decode<R>(in[i], "a reduction value");
      F(acc, b);
    }
    out.clear();
    encode_into(out, acc);
  }
  static inline const std::uint64_t id = add_reducer(fnv1a(name_of<F>()), name_of<F>(), &combine, type_id<R>());
};

template <auto F>
struct callback_function {
  using R = typename value_of_function<decltype(F)>::type;
  static void run(std::string_view value) {
    auto [v] = decode<R>(value, "a reduction result");
    F(v);
  }
  static inline const std::uint64_t id = add_function(fnv1a(name_of<F>()), name_of<F>(), &run);
};

}  // namespace detail

// Vectors (and std::arrays) are summed element by element; vectors of different lengths are a
// usage_error.
template <class R>
reducer<R> sum() {
  return {detail::builtin_reducer<R, detail::plus_op>::id};
}
template <class R>
reducer<R> min() {
  return {detail::builtin_reducer<R, detail::min_op>::id};
}
template <class R>
reducer<R> max() {
  return {detail::builtin_reducer<R, detail::max_op>::id};
}
// Concatenation, in no particular order (sort the result if order matters).
template <class X>
reducer<std::vector<X>> concat() {
  return {detail::builtin_reducer<std::vector<X>, detail::concat_op>::id};
}
// A user reducer: `void combine(R& acc, const R& in)`, associative and commutative.
template <auto F>
auto custom() {
  return reducer<typename detail::user_reducer<F>::R>{detail::user_reducer<F>::id};
}

// Where a reduction's result goes.
struct callback {
  enum class kind : std::uint8_t { root_function, every_node_function, broadcast, element };
  kind how = kind::root_function;
  std::uint64_t id = 0;     // the function, or the entry method
  std::uint32_t array = 0;  // broadcast, element: the array
  std::string key;          // element: its key's bytes
  template <class A>
  void serialize(A& ar) {
    ar(how, id, array, key);
  }
  friend bool operator==(const callback&, const callback&) = default;
};

// `void F(const R&)` (or `void F(R)`) runs once, on node 0, in its scheduler.
template <auto F>
callback on_root() {
  return {callback::kind::root_function, detail::callback_function<F>::id, 0, {}};
}
// `void F(const R&)` runs once on every node, in its scheduler: every node's program learns
// the result (a convergence test, a total).
template <auto F>
callback on_every_node() {
  return {callback::kind::every_node_function, detail::callback_function<F>::id, 0, {}};
}

}  // namespace squall::arrays
