// SPDX-License-Identifier: BSD-3-Clause
// direct-reduction (the paper's XSM unstructured, section 5.1.3): a shared array whose
// elements each belong to the home of their block, reduced in phases. In a phase every node
// adds its contributions with plain stores (y[i] += c); an owned element is updated in place,
// any other lands in this node's accumulator copy of it, started at the operation's identity.
// end_phase() sends each owner, in one message per pair, the accumulated values of its
// elements, combines them there in node order, and resets the accumulators.
//
//   squall::xsm::direct_reduction<double> red;              // add; op::min, op::max, or yours
//   double* y = squall::xsm::alloc<double>(n, red, {.homes = squall::memory::home_policy::partition()});
//   red.inspect(elements_i_contribute_to);                  // collective, once
//   for (...) {                                              // each phase
//     for (edge e : mine) { y[e.a] += f(e); y[e.b] -= f(e); }
//     red.end_phase();                                       // collective
//     ... read owned elements: every node's contributions are in ...
//   }
//
// The connectivity (which node contributes to which elements of which owner) is given once
// by inspect(), CHAOS's inspector step: a squall::comm_pattern built by
// squall::pattern_from_contributions, and a squall::channel_set sized by it. Reads: a node
// reads its own elements (combined values after end_phase) and, for the elements it gave to
// inspect, its own accumulator (the identity after end_phase); any other access to an
// element it does not own ends the job with a message. PROTOCOLS.md has the whole model.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <squall/channel.hpp>
#include <squall/collectives.hpp>
#include <squall/pattern.hpp>
#include <squall/xsm/protocol.hpp>

namespace squall::xsm {

// What the element type supplies, byte-wise, to the untyped part of the protocol.
class direct_reduction_base : public protocol {
 public:
  std::string_view name() const override { return "direct_reduction"; }
  void attach(block_index first, block_index end, std::size_t block_size) override;
  void started(segment s) override;
  void detach() override;
  void read_fault(segment s, block_index b) override;
  void write_fault(segment s, block_index b) override;

  // Collective: the elements (indices into the bound array) this node contributes to from
  // now on, owned or not, in any order, repeats allowed. Builds the pattern and the channels;
  // call it before the first phase and again whenever the connectivity changes, between
  // phases. usage_error (on every node) for an index outside the array, or an element that
  // straddles two blocks with different homes.
  void inspect(std::span<const std::int64_t> elements);

  // Collective: ends the phase. Sends every owner this node's accumulated contributions to
  // its elements (one message per owner it contributes to), combines the contributions each
  // owner receives in node order 0, 1, ... into its elements, and resets this node's
  // accumulators to the identity. usage_error before inspect().
  void end_phase();

  // The pattern inspect() built: per owner, the element indices sent to it (peers' send
  // lists) and, per contributor, the ones received from it (recv lists).
  const comm_pattern& pattern() const;
  std::size_t elements() const { return count_; }  // in the bound array
  // The node whose element it is. usage_error for an element outside the array, or before the
  // object is bound to one (xsm::alloc) or after it is freed.
  int owner_of(std::int64_t element) const;

  protocol_counter messages{"xsm.direct_reduction.messages"};  // one per owner per phase
  protocol_counter bytes{"xsm.direct_reduction.bytes"};        // contribution bytes sent
  protocol_counter elements_sent{"xsm.direct_reduction.elements_sent"};
  protocol_counter phases{"xsm.direct_reduction.phases"};
  protocol_counter accumulator_blocks{"xsm.direct_reduction.accumulator_blocks"};  // made by inspect

 protected:
  explicit direct_reduction_base(std::size_t element_size) : element_size_(element_size) {}
  ~direct_reduction_base() override;

  // out[k] = array[where[k]], then array[where[k]] = identity, for k < n.
  virtual void take(std::byte* out, std::byte* array, const std::int64_t* where, std::size_t n) const = 0;
  // array[where[k]] = identity, for k < n.
  virtual void reset(std::byte* array, const std::int64_t* where, std::size_t n) const = 0;
  // array[where[k]] = op(array[where[k]], in[k]), for k < n.
  virtual void combine(std::byte* array, const std::int64_t* where, const std::byte* in, std::size_t n) const = 0;

 private:
  void check_inspect(std::span<const std::int64_t> elements) const;
  block_index block_of(std::int64_t element) const;  // the block holding its first byte
  std::byte* array() const;

  std::size_t element_size_;
  block_index first_ = 0, end_ = 0;
  std::size_t block_size_ = 0, count_ = 0;
  bool attached_ = false;
  segment seg_;
  std::vector<std::uint8_t> accumulator_;  // per block of the range: this node's accumulator copy
  std::unique_ptr<comm_pattern> pattern_;
  std::unique_ptr<channel_set> channels_;
  std::vector<std::byte> packed_;  // one owner's contributions, packed
};

// The starting value of an accumulator for op::sum (T{}), op::min and op::max on arithmetic
// types; a user operation gives its own to the constructor.
template <class T, class Op>
constexpr bool has_identity = std::is_same_v<Op, op::sum> ||
                              ((std::is_same_v<Op, op::min> || std::is_same_v<Op, op::max>)&&std::is_arithmetic_v<T>);

template <class T, class Op>
T identity_of() {
  if constexpr (std::is_same_v<Op, op::sum>) {
    return T{};
  } else if constexpr (std::is_same_v<Op, op::min>) {
    return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
  } else {
    return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  }
}

// The protocol for an array of T combined with Op: op::sum (the default), op::min, op::max,
// or any associative T(T, T) with its identity. Bind it with xsm::alloc<T>(count, red, opt).
template <class T, class Op = op::sum>
class direct_reduction final : public direct_reduction_base {
  static_assert(std::is_trivially_copyable_v<T>, "squall::xsm::direct_reduction: T must be trivially copyable");

 public:
  explicit direct_reduction(Op op = {})
    requires has_identity<T, Op>
      : direct_reduction(op, identity_of<T, Op>()) {}
  direct_reduction(Op op, T identity) : direct_reduction_base(sizeof(T)), op_(op), identity_(identity) {}
  ~direct_reduction() override = default;

 private:
  void take(std::byte* out, std::byte* array, const std::int64_t* where, std::size_t n) const override {
    T* a = reinterpret_cast<T*>(array);
    for (std::size_t k = 0; k < n; ++k) {
      std::memcpy(out + k * sizeof(T), &a[where[k]], sizeof(T));
      a[where[k]] = identity_;
    }
  }
  void reset(std::byte* array, const std::int64_t* where, std::size_t n) const override {
    T* a = reinterpret_cast<T*>(array);
    for (std::size_t k = 0; k < n; ++k) a[where[k]] = identity_;
  }
  void combine(std::byte* array, const std::int64_t* where, const std::byte* in, std::size_t n) const override {
    T* a = reinterpret_cast<T*>(array);
    for (std::size_t k = 0; k < n; ++k) {
      T c;
      std::memcpy(&c, in + k * sizeof(T), sizeof(T));
      a[where[k]] = op_(a[where[k]], c);
    }
  }

  Op op_;
  T identity_;
};

}  // namespace squall::xsm
