// SPDX-License-Identifier: BSD-3-Clause
// Migratable object arrays: the handle a program holds.
//
//   auto cells = arrays::array<Cell, arrays::index2d>::create(arrays::block_home(bounds));
//   if (squall::node() == 0) cells.insert({i, j});          // at the index's home
//   cells[{i, j}].call<&Cell::add>(1.5);                    // one-way
//   double v = cells[{i, j}].request<&Cell::value>().get(); // with a result
//   cells.broadcast<&Cell::step>(dt);                       // every element, exactly once
//   arrays::quiesce();
//
// Messages reach an element wherever it lives, exactly once, while elements are inserted,
// deleted and migrated (libarrays/PROTOCOL.md). Any node may insert, send and broadcast, from
// its program thread (the one that created its first array) or from an entry method; a call
// from another thread is refused with squall::usage_error.
#pragma once
#include <cstdint>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include <squall/arrays/balance.hpp>
#include <squall/arrays/element.hpp>
#include <squall/arrays/entry.hpp>
#include <squall/arrays/home.hpp>
#include <squall/arrays/scheduler.hpp>

namespace squall::arrays {

namespace detail {

// What the runtime needs to make, pack and unpack an array's elements without knowing T.
struct element_ops {
  std::uint64_t element_type = 0;
  std::uint64_t index_type = 0;
  std::string_view element_name, index_name;
  element_base* (*make)() = nullptr;
  void (*pack)(element_base& e, std::string& out) = nullptr;
  void (*unpack)(element_base& e, std::string_view in) = nullptr;
  // In place (array::create_in_place): construct at an address, and find the element an
  // earlier construction left at one.
  std::size_t size = 0, align = 0;
  element_base* (*construct_at)(void* p) = nullptr;
  element_base* (*object_at)(void* p) = nullptr;
};

}  // namespace detail

// An array whose elements live in the shared virtual address space (create_in_place): each
// element has a slot of `slot_bytes` at the same address on every node, holding the element
// and its heap (element_base::heap()); a migration copies the slot's bytes to the same
// address on the new node, so the element keeps its address and pointers into it stay valid.
// Slots are taken from the node that creates the element (`slots_per_node` each).
struct in_place_options {
  std::size_t slot_bytes = 4096;      // rounded up to whole pages
  std::size_t slots_per_node = 4096;
};

namespace detail {

std::uint32_t create_array(const element_ops& ops, home_map map, const in_place_options* in_place = nullptr);
void destroy_array(std::uint32_t array);
void insert(std::uint32_t array, std::uint64_t index_type, key k, int on_node);
void send_invoke(std::uint32_t array, std::uint64_t index_type, const key& k, std::uint64_t entry, std::string_view args,
                 std::uint64_t reply_slot);
void destroy(std::uint32_t array, std::uint64_t index_type, key k);
void broadcast(std::uint32_t array, std::uint64_t entry, std::string args);
element_base* local(std::uint32_t array, std::uint64_t index_type, const key& k);
std::size_t local_count(std::uint32_t array);
void for_each_local(std::uint32_t array, void (*f)(element_base&, void*), void* ctx);
callback entry_callback(std::uint32_t array, std::uint64_t entry, const key* element);
void record_communication(std::uint32_t array, bool on);
void measure_load(std::uint32_t array, bool on);

template <class T>
struct ops_of {
  static element_base* make() { return new T(); }
  static void pack(element_base& e, std::string& out) {
    cereal::BinaryOutputArchive ar(output_to(out));
    ar(static_cast<T&>(e));
  }
  static void unpack(element_base& e, std::string_view in) {
    bounded_input_archive ar(in);
    try {
      ar(static_cast<T&>(e));
    } catch (const cereal::Exception& x) {
      throw_bad_bytes("a packed element", in.size(), x.what());
    }
  }
  static element_base* construct_at(void* p) { return new (p) T(); }
  static element_base* object_at(void* p) { return static_cast<T*>(p); }
  static const element_ops& get() {
    static const element_ops ops{type_id<T>(),
                                 type_id<typename T::index_type>(),
                                 type_name<T>(),
                                 type_name<typename T::index_type>(),
                                 &make,
                                 &pack,
                                 &unpack,
                                 sizeof(T),
                                 alignof(T),
                                 &construct_at,
                                 &object_at};
    return ops;
  }
};

}  // namespace detail

template <class T, array_index I = typename T::index_type>
class array {
  static_assert(std::is_base_of_v<element<I>, T>, "an array's element type derives from arrays::element<I>");
  static_assert(std::is_default_constructible_v<T>, "array elements are default-constructible (migration unpacks into one)");

 public:
  // One element, by index.
  class proxy {
   public:
    // One-way: runs M(args...) on the element.
    template <auto M, class... A>
    void call(A&&... args) const {
      check<M>();
      detail::send_invoke(array_, index_type, k_, detail::entry_method<M>::id,
                          detail::entry_method<M>::codec::encode_args(std::forward<A>(args)...), 0);
    }
    // Runs M(args...) on the element and brings back what it returns. What M throws, the
    // future's get() throws (squall::usage_error naming the method, array and node), not
    // the node M ran on.
    template <auto M, class... A>
    auto request(A&&... args) const {
      check<M>();
      using R = typename detail::entry_method<M>::R;
      static_assert(!std::is_void_v<R>, "request<M> needs a method that returns a value; use call<M>");
      const std::uint64_t slot = detail::open_slot();
      detail::send_invoke(array_, index_type, k_, detail::entry_method<M>::id,
                          detail::entry_method<M>::codec::encode_args(std::forward<A>(args)...), slot);
      return future<R>(slot);
    }
    // Deletes the element (it must exist, or be inserted before this arrives at its home).
    void destroy() const { detail::destroy(array_, index_type, k_); }
    // Creates the element: at its home, or on node `on`.
    void insert(int on = -1) const { detail::insert(array_, index_type, k_, on); }
    // The element, when it lives on this node (nullptr otherwise). For the program thread
    // between scheduler runs; the pointer is good until the scheduler next runs.
    T* local() const { return static_cast<T*>(detail::local(array_, index_type, k_)); }

   private:
    friend class array;
    proxy(std::uint32_t a, key k) : array_(a), k_(std::move(k)) {}
    template <auto M>
    static void check() {
      using E = typename detail::entry_method<M>::T;
      static_assert(std::is_base_of_v<E, T>, "this entry method belongs to another element type");
    }
    std::uint32_t array_;
    key k_;
  };

  // Collective: every node creates its arrays in the same order (nodes that create arrays of
  // different element or index types, or one in place and one not, at the same position all
  // throw squall::usage_error naming what node 0 and the first other node created, and none
  // is made). `homes` maps an index to its home node (hash by default; block_home for
  // index<N> ranges; or the program's own).
  static array create(home_map homes = {}) {
    return array(detail::create_array(detail::ops_of<T>::get(), std::move(homes)));
  }
  // Collective, as create(); the elements live in the shared address space and keep their
  // addresses when they migrate (in_place_options). T is moved as bytes: it must hold no
  // pointer outside its slot (point into heap(), or to globals and code, which are at the
  // same addresses on every node under squallrun). It still needs serialize() for
  // checkpoints.
  static array create_in_place(in_place_options options = {}, home_map homes = {}) {
    return array(detail::create_array(detail::ops_of<T>::get(), std::move(homes), &options));
  }

  // Collective, in the same order on every node as the creations: quiesces (squall/arrays/
  // scheduler.hpp: what it throws, this throws), then deletes every element of the array on
  // every node, running their destructors (as destroy_me() does: array_id() still answers
  // there, but the array is forgotten first, so a send to it from one throws, and a destructor
  // that throws ends the process), and forgets the array, so that the arrays a
  // program has destroyed cost quiesce nothing. Its proxies, and this object, throw
  // squall::usage_error ("array N was destroyed") from then on; checkpoint() and restart()
  // see only the arrays not destroyed. Nodes that disagree (one destroys, another quiesces
  // or destroys another array) all throw squall::usage_error, and nothing is destroyed. An
  // in-place array's segment is freed.
  void destroy() const { detail::destroy_array(id_); }

  // The array an element belongs to: its own proxy, inside its entry methods (Charm++'s
  // thisProxy).
  static array of(const T& e) { return array(e.array_id()); }

  proxy operator[](const I& i) const { return proxy(id_, key_of(i)); }
  void insert(const I& i, int on = -1) const { (*this)[i].insert(on); }

  // Runs M(args...) on every element, exactly once each, including elements that migrate
  // while the broadcast travels (the paper's section 5.1).
  template <auto M, class... A>
  void broadcast(A&&... args) const {
    using E = typename detail::entry_method<M>::T;
    static_assert(std::is_base_of_v<E, T>, "this entry method belongs to another element type");
    detail::broadcast(id_, detail::entry_method<M>::id,
                      detail::entry_method<M>::codec::encode_args(std::forward<A>(args)...));
  }

  // This node's elements now (for the program thread between scheduler runs). f must not
  // wait (a future's get, quiesce, run_until, destroy): that throws squall::usage_error.
  std::size_t local_count() const { return detail::local_count(id_); }
  template <class F>
  void for_each_local(F&& f) const {
    detail::for_each_local(
        id_, [](element_base& e, void* c) { (*static_cast<std::remove_reference_t<F>*>(c))(static_cast<T&>(e)); },
        &f);
  }

  // Reduction callbacks into this array: `void M(R)` of every element, or of one.
  template <auto M>
  callback to_all() const {
    return detail::entry_callback(id_, detail::entry_method<M>::id, nullptr);
  }
  template <auto M>
  callback to_element(const I& i) const {
    const key k = key_of(i);
    return detail::entry_callback(id_, detail::entry_method<M>::id, &k);
  }

  // Counts the bytes each element sends to each other element, for strategy::metis
  // (balance.hpp). Off by default: it costs a table update per message.
  void record_communication(bool on = true) const { detail::record_communication(id_, on); }
  // Times every entry method of the elements, for at_sync (balance.hpp), from now on (call
  // it on every node: each times its own); at_sync turns it on for the steps after it. Off until then: two reads of the
  // time-stamp counter per entry method cost a third of a message between two elements of
  // one node on an Intel Xeon (bench/arrays' local_message_us, 0.091 against 0.064 us).
  void measure_load(bool on = true) const { detail::measure_load(id_, on); }

  std::uint32_t id() const { return id_; }

 private:
  static constexpr std::uint64_t index_type = detail::type_id<I>();
  explicit array(std::uint32_t id) : id_(id) {}
  std::uint32_t id_;
};

}  // namespace squall::arrays
