// SPDX-License-Identifier: BSD-3-Clause
// What array.hpp's and element.hpp's templates call: arguments checked, then handed to the
// array's state on this node.
#include <squall/am.hpp>
#include <squall/arrays/array.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>

#include "in_place.hpp"
#include "runtime.hpp"
#include "ticks.hpp"

namespace squall::arrays {
namespace detail {
namespace {

// The array, for a call of the program's (`what`). Its state is the scheduler thread's alone
// (runtime.hpp), so a call from another thread is refused before it touches anything: sends
// from two threads at once corrupted the node's tables (a segmentation fault, no message).
array_state& program_side(std::uint32_t array, const char* what) {
  runtime& r = rt();
  if (std::this_thread::get_id() != r.scheduler_thread) {
    throw squall::usage_error(std::string("libarrays: ") + what +
                              " from a thread other than the one that created the node's first array (a node's "
                              "arrays are used from that thread and from entry methods only)");
  }
  return array_at(array);
}

array_state& checked(std::uint32_t array, std::uint64_t index_type, const char* what) {
  array_state& a = program_side(array, what);
  if (a.ops().index_type != index_type) {
    throw squall::usage_error("libarrays: array " + std::to_string(array) + " is indexed by " +
                              std::string(a.ops().index_name) + ", not by the index type given");
  }
  return a;
}

slot& slot_of(element_base& e, const char* what) {
  slot* s = detail_access::slot_of(e);
  if (s == nullptr) throw squall::usage_error(std::string("libarrays: ") + what + " on an element that is not in an array");
  return *s;
}

}  // namespace

namespace {
struct tick_epoch {
  std::uint64_t tick = ticks();
  std::int64_t ns = am::clock_ns();
};
const tick_epoch& epoch() {  // taken when the node creates its first array
  static const tick_epoch e;
  return e;
}
}  // namespace

double seconds_per_tick() {
  const tick_epoch& e = epoch();
  std::int64_t ns = am::clock_ns();
  while (ns - e.ns < 10'000'000) ns = am::clock_ns();  // only within 10 ms of the first array
  return static_cast<double>(ns - e.ns) * 1e-9 / static_cast<double>(ticks() - e.tick);
}

array_state& array_at(std::uint32_t id) {
  runtime& r = rt();
  if (id >= r.arrays.size()) throw squall::usage_error("libarrays: a message for array " + std::to_string(id) + ", which this node has not created");
  array_state* a = r.arrays[id].get();
  if (a == nullptr) throw squall::usage_error("libarrays: array " + std::to_string(id) + " was destroyed");
  return *a;
}


namespace {

// What every node must agree on for an array: its element and index types, and whether and
// how it lives in place.
std::array<std::uint64_t, 5> signature(const element_ops& ops, const in_place_options* in_place) {
  return {ops.element_type, ops.index_type, in_place != nullptr ? 1u : 0u,
          in_place != nullptr ? in_place->slot_bytes : 0u, in_place != nullptr ? in_place->slots_per_node : 0u};
}

std::string describe(const element_ops& ops, const in_place_options* in_place) {
  std::string d = "an array of " + std::string(ops.element_name) + " indexed by " + std::string(ops.index_name);
  if (in_place != nullptr) {
    d += ", in place (slots of " + std::to_string(in_place->slot_bytes) + " bytes, " +
         std::to_string(in_place->slots_per_node) + " per node)";
  }
  return d;
}

std::string broadcast_string(std::string s, int root) {
  std::uint64_t size = s.size();
  squall::broadcast(size, root);
  s.resize(size);
  squall::broadcast(std::span<char>(s.data(), s.size()), root);
  return s;
}

// Collective, before anything of the array is made (an array in place allocates a segment,
// itself collective): every node creates the same array. Nodes that created different ones
// at the same position used to go on, each node making the elements the others inserted as
// its own type (an index's bytes read as another index type), without a word; now every
// node throws, naming what node 0 and the first node that differs from it created.
void check_same_array(const runtime& r, std::uint32_t id, const element_ops& ops, const in_place_options* in_place) {
  const auto mine = signature(ops, in_place);
  bool same = true;
  for (const auto& v : squall::range_over_nodes(mine)) same = same && v.same();
  if (same) return;  // the common case: one allreduce, where a barrier was
  auto first = mine;
  squall::broadcast(std::span<std::uint64_t>(first), 0);
  const int other = squall::allreduce(mine != first ? r.me : r.nodes, squall::op::min{});
  const std::string at0 = broadcast_string(describe(ops, in_place), 0);
  const std::string at_other = broadcast_string(describe(ops, in_place), other);
  throw squall::usage_error("libarrays: array::create: node 0 creates array " + std::to_string(id) + " as " + at0 +
                            ", node " + std::to_string(other) + " as " + at_other +
                            " (every node creates the same arrays, in the same order)");
}

}  // namespace

std::uint32_t create_array(const element_ops& ops, home_map map, const in_place_options* in_place) {
  if (!squall::initialized()) throw squall::usage_error("libarrays: array::create before squall::init");
  runtime& r = rt();
  if (r.arrays.empty()) {
    r.scheduler_thread = std::this_thread::get_id();
    epoch();
  }
  if (std::this_thread::get_id() != r.scheduler_thread) {
    throw squall::usage_error("libarrays: arrays are created by the thread that created the node's first one");
  }
  const auto id = static_cast<std::uint32_t>(r.arrays.size());
  if (in_place != nullptr) check_same_array(r, id, ops, in_place);  // before its segment is allocated
  r.arrays.push_back(std::make_unique<array_state>(id, ops, std::move(map), in_place));
  r.live.push_back(r.arrays.back().get());
  // No node sends for this array before every node has it: the agreement's allreduce is the
  // barrier (an array in place has agreed already).
  if (in_place != nullptr) {
    squall::barrier();
  } else {
    try {
      check_same_array(r, id, ops, in_place);
    } catch (...) {
      r.live.pop_back();
      r.arrays.pop_back();
      throw;
    }
  }
  return id;
}

void destroy_array(std::uint32_t id) {
  check_scheduler("array::destroy");
  program_side(id, "array::destroy");  // destroyed already, or never created: throws on every node
  // Nothing is in flight for it once the job is quiescent, and nothing sent after: a proxy
  // of it throws from now on (array_at).
  quiesce_for(std::uint64_t{id} + 1);
  runtime& r = rt();
  std::unique_ptr<array_state> gone = std::move(r.arrays[id]);
  std::erase(r.live, gone.get());
  program_code running(nullptr);  // the elements' destructors run as program code
  gone->delete_elements();
  gone.reset();
}

void insert(std::uint32_t array, std::uint64_t index_type, key k, int on_node) {
  if (on_node < -1 || on_node >= rt().nodes) {
    throw squall::usage_error("libarrays: insert on node " + std::to_string(on_node) + " of " + std::to_string(rt().nodes));
  }
  checked(array, index_type, "insert").insert(k, on_node);
}

void send_invoke(std::uint32_t array, std::uint64_t index_type, const key& k, std::uint64_t entry, std::string_view args,
                 std::uint64_t reply_slot) {
  checked(array, index_type, reply_slot != 0 ? "request" : "call").send_invoke(k, entry, args, reply_slot);
}

void destroy(std::uint32_t array, std::uint64_t index_type, key k) {
  checked(array, index_type, "destroy").send_invoke(k, 0, {}, 0);  // entry 0: delete the element
}

void broadcast(std::uint32_t array, std::uint64_t entry, std::string args) {
  program_side(array, "broadcast").request_broadcast(entry, std::move(args));
}

element_base* local(std::uint32_t array, std::uint64_t index_type, const key& k) {
  entry_rec* e = checked(array, index_type, "local()").find(k);
  return e != nullptr ? e->elem.get() : nullptr;
}

std::size_t local_count(std::uint32_t array) { return program_side(array, "local_count").local_count(); }

void record_communication(std::uint32_t array, bool on) {
  program_side(array, "record_communication").record_communication(on);
}
void measure_load(std::uint32_t array, bool on) { program_side(array, "measure_load").measure_load(on); }

void for_each_local(std::uint32_t array, void (*f)(element_base&, void*), void* ctx) {
  array_state& a = program_side(array, "for_each_local");
  // The visit must not run the scheduler (check_scheduler), however it leaves.
  struct visiting {
    bool was = std::exchange(rt().in_for_each, true);
    ~visiting() { rt().in_for_each = was; }
  } guard;
  a.for_each_local([&](element_base& e) { f(e, ctx); });
}

callback entry_callback(std::uint32_t array, std::uint64_t entry, const key* element) {
  program_side(array, element != nullptr ? "to_element" : "to_all");  // a destroyed array's throws
  callback c;
  c.how = element != nullptr ? callback::kind::element : callback::kind::broadcast;
  c.id = entry;
  c.array = array;
  if (element != nullptr) c.key = element->bytes();
  return c;
}

void invoke_entry(element_base& e, const entry_info& info, std::string_view args, std::string* result) {
  slot& s = slot_of(e, "an entry method");
  if (info.element_type != s.array->ops().element_type) {
    throw squall::usage_error("libarrays: entry method " + std::string(info.name) + " sent to an element of type " +
                              std::string(s.array->ops().element_name));
  }
  const bool timed = s.array->measures_load();
  const std::uint64_t start = timed ? ticks() : 0;
  {
    program_code running(&s);
    info.invoke(e, args, result);
  }
  if (timed) s.load_ticks += ticks() - start;
  runtime& r = rt();
  ++r.counts.invoked;
  count().invoked.add_from_one_thread();
}

void run_callback(std::uint64_t function_id, std::string_view value) {
  program_code running(nullptr);
  function(function_id)(value);
}

void array_state::run_hook(entry_rec& e, void (*hook)(element_base&)) {
  try {
    program_code running(e.s.get());
    hook(*e.elem);
  } catch (...) {
    after_entry(e);  // as after an entry method that throws (routing.cpp's run_entry)
    throw;
  }
  after_entry(e);
}

[[noreturn]] void protocol_error(const char* what, const message& m) {
  throw squall::usage_error(std::string("libarrays: ") + what + " (array " + std::to_string(m.h.array) + ", from node " +
                            std::to_string(m.h.source) + ")");
}

}  // namespace detail

void element_base::migrate_me(int to) {
  detail::slot& s = detail::slot_of(*this, "migrate_me");
  if (to < 0 || to >= detail::rt().nodes) {
    throw squall::usage_error("libarrays: migrate_me(" + std::to_string(to) + ") in a job of " +
                              std::to_string(detail::rt().nodes) + " nodes");
  }
  s.migrate_to = to;
}

std::uint32_t element_base::array_id() const {
  if (slot_ == nullptr) throw squall::usage_error("libarrays: array_id() of an element that is not in an array");
  return slot_->array->id();
}

// A NaN, infinite or negative load would pass through at_sync's sums unnoticed (its report
// said "avg nan"), so it is refused here, where the element that gave it is known.
void element_base::add_load(double seconds) {
  detail::slot& s = detail::slot_of(*this, "add_load");
  if (!std::isfinite(seconds) || seconds < 0) {
    char value[32];
    std::snprintf(value, sizeof value, "%g", seconds);
    throw squall::usage_error("libarrays: add_load(" + std::string(value) + ") by element " + s.array->index_text(s.k) +
                              " of array " + std::to_string(s.array->id()) +
                              ": a load is a finite number of seconds, 0 or more");
  }
  s.load_s += seconds;
}

void element_base::destroy_me() { detail::slot_of(*this, "destroy_me").destroy = true; }

double element_base::measured_load() const {
  const detail::slot* s = slot_;
  return s != nullptr ? s->load_s + static_cast<double>(s->load_ticks) * detail::seconds_per_tick() : 0;
}

void element_base::contribute_bytes(std::uint64_t reducer, std::uint64_t value_type, std::string value,
                                    const callback& then) {
  detail::slot& s = detail::slot_of(*this, "contribute");
  s.array->contribute(s, reducer, value_type, std::move(value), then);
}

}  // namespace squall::arrays
