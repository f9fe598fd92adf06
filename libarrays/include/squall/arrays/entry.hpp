// SPDX-License-Identifier: BSD-3-Clause
// Entry methods: a member function named as a template argument (&Cell::add) becomes a
// number in messages and an invoker on the receiving node (registry.hpp).
#pragma once
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <squall/arrays/codec.hpp>
#include <squall/arrays/registry.hpp>

namespace squall::arrays {

// Specialise as true for an entry method that may create its element on demand: a message
// to an index with no element then constructs one at the index's home and delivers to it
// (the paper's section 4.2), instead of holding the message until an insert.
//   template <> inline constexpr bool creates_on_demand<&Counter::add> = true;
template <auto M>
inline constexpr bool creates_on_demand = false;

// Specialise as true for an entry method whose latency matters more than what it may touch
// (Charm++'s [expedited]). Any entry method whose message arrives through the substrate's
// mailbox lane (a small message between two nodes of a host) while the node's program thread
// waits in run_until (a future's get() included) with nothing else queued runs at once, from
// the substrate's message handler with the node lock let go (scheduler.hpp). An expedited
// one runs so from any packet, large or from another host, and inside the handler itself,
// under the node lock: an element round trip between two nodes of a host costs about 10%
// less again (bench/arrays). In exchange it must not touch an application view of a shared
// segment (libtsm or libxsm memory, kernel-free's memory::allocate): a fault there ends the
// program. It may send as any entry method; a message too large for one packet leaves when
// the handler is done, with every message the method sent after it. What it throws,
// run_until throws. Elements of an array in place (which live in a segment) run as ordinary
// methods. Anywhere else (a message from this node itself, work already queued) it is
// queued as usual.
//   template <> inline constexpr bool expedited<&Cell::ping> = true;
template <auto M>
inline constexpr bool expedited = false;

namespace detail {

template <class F>
struct method_traits;
template <class T, class R, class... A>
struct method_traits<R (T::*)(A...)> {
  using element_type = T;
  using result_type = R;
  using args = std::tuple<std::decay_t<A>...>;
};
template <class T, class R, class... A>
struct method_traits<R (T::*)(A...) const> : method_traits<R (T::*)(A...)> {};

template <class Tuple>
struct codec_of;
template <class... A>
struct codec_of<std::tuple<A...>> {
  template <class... G>
  static std::string encode_args(G&&... given) {
    static_assert(sizeof...(G) == sizeof...(A), "wrong number of arguments for this entry method");
    return encode(static_cast<const A&>(A(std::forward<G>(given)))...);
  }
  static std::tuple<A...> decode_args(std::string_view in, const char* what) { return decode<A...>(in, what); }
};

template <auto M>
struct entry_method {
  using traits = method_traits<decltype(M)>;
  using T = typename traits::element_type;
  using R = typename traits::result_type;
  using codec = codec_of<typename traits::args>;

  // No lambda here: a closure type would give an element type of internal linkage (one in
  // an anonymous namespace) a subobject of another TU's linkage in unity builds.
  static void invoke(element_base& e, std::string_view args, std::string* result) {
    T& self = static_cast<T&>(e);
    auto call = std::tuple_cat(std::tie(self), codec::decode_args(args, "arguments for this entry method"));
    if constexpr (std::is_void_v<R>) {
      std::apply(M, call);
    } else {
      R r = std::apply(M, call);
      if (result != nullptr) encode_into(*result, r);
    }
  }
  static inline const std::uint64_t id =
      add_entry({fnv1a(name_of<M>()), name_of<M>(), &invoke, type_id<T>(), creates_on_demand<M>, expedited<M>});
};

}  // namespace detail
}  // namespace squall::arrays
