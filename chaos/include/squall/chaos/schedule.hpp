// SPDX-License-Identifier: BSD-3-Clause
// The inspector and the executor: communication schedules built from indirection arrays,
// and the data movement they describe.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <span>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include <squall/collectives.hpp>
#include <squall/pattern.hpp>

#include <squall/chaos/exchange.hpp>
#include <squall/chaos/translation_table.hpp>
#include <squall/chaos/types.hpp>

namespace squall::chaos {

// What one execution of a schedule moves between this node and its peers.
struct schedule_figures {
  int peers_sent_to = 0, peers_received_from = 0;  // per gather (scatter is the reverse)
  index elements_sent = 0, elements_received = 0;  // per gather
};

class schedule {
 public:
  schedule();  // empty: moves nothing
  // A schedule moved from is not an empty one: using it (its sizes, an execution) is a
  // usage_error on the node that does (merge's and the incremental inspector's on every node),
  // until a schedule is assigned to it.
  schedule(schedule&&) noexcept;
  schedule& operator=(schedule&&) noexcept;
  ~schedule();

  index local_size() const;   // owned elements (the table's local_size)
  index ghost_begin() const;  // first ghost slot this schedule fills (local_size, or after an earlier schedule's)
  index ghost_end() const;    // one past its last: a data array must hold at least ghost_end() elements
  index ghosts() const { return ghost_end() - ghost_begin(); }
  schedule_figures figures() const;
  bool empty() const;

  struct state;
  explicit schedule(std::shared_ptr<state> s);
  // Null for an empty schedule.
  const std::shared_ptr<state>& internals() const {
    if (moved_from_) [[unlikely]] detail::used_after_move("chaos::schedule");
    return s_;
  }
  // Whether this handle was moved from (and not assigned since): the collectives that take a
  // schedule (merge, the incremental inspector) ask before internals(), so that a node's moved
  // schedule is a problem they agree on, refused on every node.
  bool moved_from() const noexcept { return moved_from_; }

 private:
  std::shared_ptr<state> s_;
  bool moved_from_ = false;
};

// Collective (the inspector). Reads global indices from `indirection` arrays, fetches each
// off-node element once however often and in whichever array it is referenced, and rewrites
// the arrays in place to local offsets: an owned element by its offset, an off-node one by
// its ghost slot (>= local_size()). Out-of-range indices are a usage_error.
schedule inspect(const translation_table& table, std::initializer_list<std::span<index>> indirection);

// Collective (incremental inspector). Like inspect, but elements `earlier` already fetches
// are not fetched again (the arrays point at earlier's ghost slots), and new ghost slots
// follow earlier.ghost_end(). Executing `earlier` and the result together fills every ghost.
// An `earlier` moved from, on any node, is a usage_error on every node.
schedule inspect(const translation_table& table, const schedule& earlier,
                 std::initializer_list<std::span<index>> indirection);

// Collective. One schedule that moves what a and b move, with one message per pair
// (b must have been built incrementally on a, or the two must fill disjoint ghost slots).
// Every node takes part, also one whose a or b is empty (it adds nothing there): input that
// cannot be merged on any node, or a schedule moved from, is a usage_error on every node.
schedule merge(const schedule& a, const schedule& b);

// Combining functions for scatter_op: `op(owner_value, ghost_value)` -> new owner value
// (the collectives' operators).
namespace combine {
using add = squall::op::sum;
using min = squall::op::min;
using max = squall::op::max;
}  // namespace combine

namespace detail {
// Typed data as the executor moves it: an array of `count` elements of `elem_size` bytes.
struct array_ref {
  std::byte* data;
  std::size_t count;
  std::size_t elem_size;
  std::size_t type_hash;  // elements must be of the same type on every node
  squall::pack_fn pack;  // squall/pattern.hpp's, instantiated for the element type
  squall::unpack_fn unpack;
};
// Combines `count` packed ghost values into the owners at their positions, in place:
// owners[where[i]] = op(owners[where[i]], ghosts[i]).
using combine_fn = std::function<void(std::byte* owners, const index* where, const std::byte* ghosts, std::size_t count)>;

template <class T>
array_ref ref(std::span<T> a) {
  static_assert(std::is_trivially_copyable_v<T>, "chaos: arrays moved by a schedule hold trivially copyable elements");
  return {reinterpret_cast<std::byte*>(a.data()), a.size(), sizeof(T), typeid(T).hash_code(),
          &squall::pack_elements<T>, &squall::unpack_elements<T>};
}
template <class T, class Op>
combine_fn combiner(Op op) {
  return [op](std::byte* owners, const index* where, const std::byte* ghosts, std::size_t count) {
    T* o = reinterpret_cast<T*>(owners);
    for (std::size_t i = 0; i < count; ++i) {
      T g;
      std::memcpy(&g, ghosts + i * sizeof(T), sizeof(T));
      o[where[i]] = op(o[where[i]], g);
    }
  };
}

enum class direction : std::uint8_t { gather, scatter, scatter_op };
class pending;  // an execution begun and not yet ended (owned by end())
pending* begin(const schedule& s, direction d, array_ref a, combine_fn op);
void end(pending* p);
}  // namespace detail

// A split-phase execution: begun, then ended (work may overlap in between). The data array
// must not be touched in between. Destroying an unfinished one ends it. Ending one that was
// moved from is a usage_error: the one it was moved into ends the execution, and the data is
// not there before that.
class execution {
 public:
  execution() = default;
  explicit execution(detail::pending* p) : p_(p) {}
  execution(execution&& o) noexcept : p_(o.p_), moved_from_(o.moved_from_) {
    o.p_ = nullptr;
    o.moved_from_ = true;
  }
  execution& operator=(execution&& o) noexcept;
  ~execution() { finish(); }
  void end();  // waits until this node's part is done (no-op if already ended)

 private:
  void finish();  // end(), for one moved from too (a no-op then)
  detail::pending* p_ = nullptr;
  bool moved_from_ = false;
};

// Collective over the schedule's peers (every node calls it). `data` holds the owned
// elements followed by the ghost area; its size must be at least s.ghost_end(), else a
// usage_error on this node only (checked here alone, to keep a collective off every
// execution): the other nodes then wait for it in this call and end the job as out of step.
// Each sends at most one message per communicating pair.
template <class T>
void gather(const schedule& s, std::span<T> data) {
  detail::end(detail::begin(s, detail::direction::gather, detail::ref(data), nullptr));
}
template <class T>
execution gather_begin(const schedule& s, std::span<T> data) {
  return execution(detail::begin(s, detail::direction::gather, detail::ref(data), nullptr));
}

// Ghost values overwrite their owners' elements.
template <class T>
void scatter(const schedule& s, std::span<T> data) {
  detail::end(detail::begin(s, detail::direction::scatter, detail::ref(data), nullptr));
}
template <class T>
execution scatter_begin(const schedule& s, std::span<T> data) {
  return execution(detail::begin(s, detail::direction::scatter, detail::ref(data), nullptr));
}

// Ghost values are combined into their owners' elements: owner = op(owner, ghost), ghosts
// from different nodes in node order. Ghost slots are left as they were.
template <class T, class Op = combine::add>
void scatter_op(const schedule& s, std::span<T> data, Op op = {}) {
  detail::end(detail::begin(s, detail::direction::scatter_op, detail::ref(data), detail::combiner<T>(op)));
}
template <class T, class Op = combine::add>
execution scatter_op_begin(const schedule& s, std::span<T> data, Op op = {}) {
  return execution(detail::begin(s, detail::direction::scatter_op, detail::ref(data), detail::combiner<T>(op)));
}

// The split-phase form of scatter_append: begun (counts agreed, items sent), then ended.
template <class T>
class append_execution {
 public:
  explicit append_execution(exchange_handle h) : h_(std::move(h)) {}
  // What arrived here, in source-node order, each source's items in the order sent.
  std::vector<T> end() {
    std::vector<T> arrived;
    for (const auto& part : h_.end("chaos::append_execution")) {
      const std::size_t at = arrived.size();
      arrived.resize(at + part.size() / sizeof(T));
      if (!part.empty()) std::memcpy(static_cast<void*>(arrived.data() + at), part.data(), part.size());
    }
    return arrived;
  }

 private:
  exchange_handle h_;
};

// Collective. Begins sending each item to node dest[i] (one message per communicating pair).
// A destination that is not a node, or a count of destinations other than of items, on any
// node is a usage_error on every node.
template <class T>
append_execution<T> scatter_append_begin(std::span<const T> items, std::span<const int> dest) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::string problem;
  std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(exchange_nodes()));
  if (items.size() != dest.size()) {
    problem = "one destination per item is needed (" + std::to_string(items.size()) + " items, " +
              std::to_string(dest.size()) + " destinations)";
  }
  for (std::size_t i = 0; problem.empty() && i < items.size(); ++i) {
    if (dest[i] < 0 || static_cast<std::size_t>(dest[i]) >= out.size()) {
      problem = "destination node " + std::to_string(dest[i]) + " (of item " + std::to_string(i) + ") does not exist";
      break;
    }
    auto& o = out[static_cast<std::size_t>(dest[i])];
    const auto* bytes = reinterpret_cast<const std::byte*>(&items[i]);
    o.insert(o.end(), bytes, bytes + sizeof(T));
  }
  if (!problem.empty()) out.assign(out.size(), {});
  return append_execution<T>(detail::exchange_begin_checked(std::move(out), problem, "chaos::scatter_append"));
}

// Collective. Sends each item to node dest[i] (one message per communicating pair) and
// returns what arrived here, in source-node order, each source's items in the order sent.
// This is how DSMC moves particles to the owners of their new cells.
template <class T>
std::vector<T> scatter_append(std::span<const T> items, std::span<const int> dest) {
  return scatter_append_begin(items, dest).end();
}

// Collective. The same, to the owners of global elements: item i goes to the owner of
// dest_global[i] in `table`.
template <class T>
std::vector<T> scatter_append(const translation_table& table, std::span<const T> items,
                              std::span<const index> dest_global) {
  std::vector<location> where;
  std::string problem;
  try {  // an index out of range (lookup is not collective): refused on every node below
    where = table.lookup(dest_global);
  } catch (const usage_error& e) {
    problem = e.cause();  // usage_error adds "squall: " again
  }
  if (!problem.empty()) {
    (void)detail::exchange_begin_checked(std::vector<std::vector<std::byte>>(static_cast<std::size_t>(exchange_nodes())),
                                         problem, "chaos::scatter_append");
  }
  std::vector<int> dest(where.size());
  for (std::size_t i = 0; i < where.size(); ++i) dest[i] = where[i].owner;
  return scatter_append(items, std::span<const int>(dest));
}

}  // namespace squall::chaos
