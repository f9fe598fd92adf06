// SPDX-License-Identifier: BSD-3-Clause
// Array elements. An element is a user class derived from element<I> (I its index type),
// default-constructible, with a cereal `serialize(Archive&)` member that packs what it must
// carry when it migrates. Its public member functions are its entry methods.
//
//   struct Cell : squall::arrays::element<squall::arrays::index2d> {
//     double value = 0;
//     void add(double x) { value += x; }
//     template <class A> void serialize(A& ar) { ar(value); }
//   };
//
// Inside an entry method an element may send (to any element, broadcast), contribute to a
// reduction, ask to migrate (migrate_me) or to be deleted (destroy_me); the last two take
// effect when the method returns. It must not wait (future::get, run_until, quiesce): entry
// methods run one at a time, on the node's program thread, from its scheduler.
#pragma once
#include <cstdint>
#include <memory_resource>
#include <string>

#include <squall/arrays/codec.hpp>
#include <squall/arrays/index.hpp>
#include <squall/arrays/key.hpp>
#include <squall/arrays/reduce.hpp>

namespace squall::arrays {

namespace detail {
struct slot;  // the runtime's record of a local element (libarrays/src)
}

namespace detail {
// The heap of the element being constructed (set by the runtime around its construction).
std::pmr::memory_resource* constructing_heap();
}  // namespace detail

class element_base {
 public:
  element_base() : heap_(detail::constructing_heap()) {}
  element_base(const element_base&) = delete;
  element_base& operator=(const element_base&) = delete;
  virtual ~element_base() = default;

  // Moves this element to node `to` once the running entry method returns (the paper's
  // migrate call). Messages sent to it meanwhile reach it there, exactly once. Should its
  // serialize() throw as it unpacks there, the element is lost: deleted on arrival, its
  // messages reported at quiescence as any deleted element's, and that node's scheduler
  // throws squall::usage_error naming it (quiesce, on every node).
  void migrate_me(int to);
  // Deletes this element once the running entry method returns.
  void destroy_me();
  // This element's value for the array's next reduction (reduce.hpp).
  template <class R>
  void contribute(const R& value, reducer<R> how, const callback& then) {
    constexpr std::uint64_t value_type = detail::type_id<R>();  // at compile time, not per call
    contribute_bytes(how.id, value_type, detail::encode(value), then);
  }
  // The element's work since the last load-balancing step (balance.hpp), in seconds: the
  // time its entry methods ran (when its array measures its load), plus what the program added (its own estimate, e.g. a cost
  // model that does not depend on the machine's noise).
  double measured_load() const;
  // `seconds` must be finite and not negative: NaN, an infinity or a negative value is a
  // squall::usage_error naming the element and the value (thrown in the entry method).
  void add_load(double seconds);

  // Called on the new node right after the element arrived by migration (and before any
  // message reaches it there): Charm++'s ckJustMigrated.
  virtual void on_migrated() {}
  // The array this element belongs to (array<T>::of(*this) is its proxy).
  std::uint32_t array_id() const;

  // Where the element's own heap data should live. In an array created in place
  // (array::create_in_place) it is an arena inside the element's slot of the shared address
  // space, which moves with it to the same address: give it to std::pmr containers and every
  // pointer into them stays valid across migrations. Otherwise the ordinary heap (the data
  // then travels by serialize()).
  std::pmr::memory_resource& heap() const { return *heap_; }

 private:
  friend struct detail_access;
  void contribute_bytes(std::uint64_t reducer, std::uint64_t value_type, std::string value, const callback& then);
  virtual void set_key(const key& k) = 0;

  detail::slot* slot_ = nullptr;
  std::pmr::memory_resource* heap_;
};

template <array_index I>
class element : public element_base {
 public:
  using index_type = I;
  const I& this_index() const { return index_; }

 private:
  void set_key(const key& k) final { index_ = index_of<I>(k); }
  I index_{};
};

// The runtime's way into an element (libarrays/src only).
struct detail_access {
  static detail::slot*& slot_of(element_base& e) { return e.slot_; }
  static void set_key(element_base& e, const key& k) { e.set_key(k); }
};

}  // namespace squall::arrays
