// SPDX-License-Identifier: BSD-3-Clause
// A node's libarrays state: its arrays, its message queues and its scheduler. Everything here
// is touched by the node's program thread only (the scheduler's), except the inbox, which the
// substrate's handler fills and the scheduler empties, both under the node lock.
#pragma once
#include <atomic>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <squall/arrays/array.hpp>
#include <squall/stats.hpp>

#include "element_table.hpp"
#include "location.hpp"
#include "wire.hpp"

namespace squall::arrays::detail {

class array_state;
class slot_store;

// The runtime's record of a local element (element_base::slot_ points here).
struct slot {
  array_state* array = nullptr;
  key k;
  std::uint64_t bcast_count = 0;  // broadcasts delivered to it (the last serial)
  std::uint64_t red_count = 0;    // reductions it contributed to (the next one's number)
  int migrate_to = -1;            // asked in the running entry method
  bool destroy = false;           // asked in the running entry method
  std::uint32_t place = 0;        // in place: the element's slot (in_place.hpp)
  double load_s = 0;              // the program's add_load since the last balancing step
  std::uint64_t load_ticks = 0;   // entry-method time since then (ticks.hpp)
  std::unordered_map<key, std::uint64_t> sent_to;  // bytes to each element (record_communication)
};

// An element's object: on the heap, or constructed in a slot of the shared address space
// (in_place.hpp), which only its destructor is for.
struct element_deleter {
  bool in_place = false;
  void operator()(element_base* e) const {
    if (in_place) {
      e->~element_base();
    } else {
      delete e;
    }
  }
};
using element_ptr = std::unique_ptr<element_base, element_deleter>;

// One index's entry on this node.
struct entry_rec {
  key k;
  int home = -1;  // the key's home node (the home map asked once, when the entry is made)
  location_entry loc;
  element_ptr elem;                    // when local
  std::unique_ptr<slot> s;             // when local
  std::vector<std::string> held;       // messages (and, at the home, insertions) held
  std::uint64_t last_used = 0;         // the node's quiescence count when last looked up
};

// What a node collects for one reduction: the values as they came (encoded), combined once
// when the node reports (fold), so that combining costs their total size, not its square.
struct partial {
  std::vector<std::string> values;
  std::uint64_t reducer = 0, value_type = 0;
  callback then;
  std::uint64_t count = 0;
  // Its parts disagreed (two reducers or callbacks): said once. A failed quiesce ends without
  // waiting for the reduction's other parts, which are dropped when they come.
  bool failed = false;
};

class array_state {
 public:
  array_state(std::uint32_t id, const element_ops& ops, home_map homes, const in_place_options* in_place);
  ~array_state();

  std::uint32_t id() const { return id_; }
  bool in_place() const { return in_place_ != nullptr; }
  const element_ops& ops() const { return ops_; }
  int home_of(const key& k) const;
  // The index's entry, made when this node has none: by key, or by a message's key bytes.
  entry_rec& entry(const key& k) { return entry(k.hash(), k.bytes()); }
  entry_rec& entry(std::uint64_t hash, std::string_view key_bytes);
  entry_rec* find(const key& k) { return table_.find(k); }
  // The record of an arriving message's element. The last one is kept at hand: an element's
  // messages come in runs (a ping-pong, a neighbour's several sends), and a hit skips the
  // key's hash and the table's probe.
  entry_rec& entry_of(const message& m) {
    if (entry_rec* e = table_.at_hand(m.key)) {
      e->last_used = quiescences_;
      return *e;
    }
    entry_rec& e = entry(hash_bytes(m.key), m.key);
    table_.keep_at_hand(e);
    return e;
  }

  // Program side (any thread of the scheduler, in or out of an entry method).
  void send_invoke(const key& k, std::uint64_t entry, std::string_view args, std::uint64_t reply_slot);
  void insert(const key& k, int on);
  void request_broadcast(std::uint64_t entry, std::string args);
  void contribute(slot& s, std::uint64_t reducer, std::uint64_t value_type, std::string value, const callback& then);
  std::size_t local_count() const { return locals_; }
  template <class F>
  void for_each_local(F&& f) {
    table_.for_each([&](entry_rec& e) {
      if (e.elem) f(*e.elem);
    });
  }

  // Message side (the scheduler).
  void handle(const message& m, std::string_view bytes);
  // An invoke of `method` (null: a proxy's destroy()), which the caller has looked up.
  void on_invoke(const message& m, std::string_view bytes, const entry_info* method);

  // Messages held here, and `first` (when empty) says for which element and array one is.
  std::size_t held_messages(std::string& first) const;
  // At quiescence, what is held that nothing can answer any more, in one pass: a request for
  // an element that does not exist gets an error reply (counted in the result); an insertion
  // held behind an element that exists (a true duplicate: no deletion is in flight) is
  // dropped, the first described in `duplicate` when it is empty.
  std::size_t settle_held(std::string& duplicate);
  // Drops the held request answering to future slot `slot`, if an entry here holds it, and
  // gives its index (one-node get(), scheduler.cpp); an index as text for error messages.
  std::optional<key> drop_held_request(std::uint64_t slot);
  std::string index_text(const key& k) const;
  void trim_broadcasts() { past_.clear(); }
  // array::destroy(): runs every local element's destructor while its slot and this array
  // are whole, as destroy_me() does (a destructor may ask array_id()).
  void delete_elements();
  std::size_t expire_caches();  // at quiescence; returns how many entries it forgot
  void record_communication(bool on) { record_comm_ = on; }
  // Whether entry methods are timed for load balancing (array::measure_load; at_sync turns
  // it on for the steps after it).
  void measure_load(bool on) { measure_load_ = on; }
  bool measures_load() const { return measure_load_; }

  // Load balancing (balance.cpp): this node's elements as the strategies see them, and the
  // moves decided for them.
  std::string load_report();
  void start_measurement();
  std::size_t move(const key& k, int to);

  // Checkpoints (checkpoint.cpp): this node's elements packed as records appended to `out`
  // (returns how many), and one read back, from byte `offset` of writing node `writer`'s file.
  std::uint64_t pack_locals(std::string& out);
  void restore(const key& k, std::string_view packed, int writer, std::uint64_t offset);

 private:
  // Routing (routing.cpp).
  void run_entry(entry_rec& e, const entry_info* method, const message& m);  // method null: destroy()
  void after_entry(entry_rec& e);
  void on_insert(const message& m, std::string_view bytes);
  void on_create(const message& m);
  void on_routing_update(const message& m);
  void on_deleted(const message& m, std::string_view bytes);
  void flush(entry_rec& e);
  // Tells a request's requester that the home holds it for a missing element, or released it.
  void tell_held(std::uint64_t slot, const key& k, bool released);
  int route(const entry_rec& e) const;
  void send_to(int node, header h, const key& k, std::string_view body);
  // Location news from here: `what` (routing_update or deleted) with this node and `epoch`.
  void tell(int node, kind what, const key& k, std::uint32_t epoch);
  void construct(entry_rec& e, const key& k, std::uint32_t epoch);

  // Lifecycle (lifecycle.cpp).
  void migrate(entry_rec& e, int to);
  void on_migrate(const message& m);
  void on_restore(const message& m);
  void remove_local(entry_rec& e);
  void install(entry_rec& e, const key& k, element_ptr elem, std::unique_ptr<slot> s);
  element_ptr new_element(std::uint32_t& place);  // default-constructed, in place or on the heap
  void destroy_element(entry_rec& e);             // its destructor, and its slot freed
  // Runs one of the element's own hooks as if it were an entry method.
  void run_hook(entry_rec& e, void (*hook)(element_base&));

  // Broadcasts (broadcasts.cpp).
  void on_bcast_request(const message& m);
  void on_bcast(const message& m);
  void catch_up(entry_rec& e);

  // Reductions (reductions.cpp).
  void add_to(partial& p, std::uint64_t reducer, std::uint64_t value_type, std::string_view value,
              const callback& then, std::uint64_t count);
  void check_reductions();
  void on_red_part(const message& m);
  void on_red_request(const message& m);
  void finish(partial& p);
  array_state& callback_array(const callback& cb) const;
  std::string fold(partial& p) const;
  void count_in(std::uint64_t red_count) { ++by_red_count_[red_count]; }
  void count_out(std::uint64_t red_count);

  std::uint32_t id_;
  const element_ops& ops_;
  home_map homes_;
  std::unique_ptr<slot_store> in_place_;  // the array was created in place
  element_table<entry_rec> table_;
  std::size_t locals_ = 0;
  std::uint64_t quiescences_ = 0;  // expire_caches' clock
  // The largest epoch of a home entry expire_caches forgot: a new home entry starts there, so
  // an element inserted at a forgotten index is newer than any node's memory of the last one.
  std::uint32_t epoch_floor_ = 0;
  bool record_comm_ = false;
  bool measure_load_ = false;

  // Broadcasts: node 0 numbers them; each node keeps what it delivered for late arrivals.
  std::uint64_t bcast_issued_ = 0;  // node 0
  std::uint64_t bcast_seen_ = 0;
  std::map<std::uint64_t, std::pair<std::uint64_t, std::string>> past_;  // serial -> entry, args

  // Reductions (the paper's section 5.2): this node collects `red_current_`; local elements
  // are counted by the number of the next reduction they will contribute to.
  std::uint64_t red_current_ = 0;
  std::map<std::uint64_t, partial> parts_;
  std::set<std::uint64_t> requested_;
  std::map<std::uint64_t, int> by_red_count_;
  std::int64_t births_ = 0, deaths_ = 0;
  std::map<std::uint64_t, std::int64_t> delayed_deaths_;
  struct root_state {
    partial p;
    std::int64_t net = 0;
    int reported = 0;
  };
  std::map<std::uint64_t, root_state> root_;  // node 0
};

// Counters (SQUALL_STATS, arrays.*).
struct counters {
  stats::counter sent{"arrays.messages_sent"};
  stats::counter handled{"arrays.messages_handled"};
  stats::counter invoked{"arrays.entry_methods"};
  stats::counter forwarded{"arrays.forwarded"};
  stats::counter routing_updates{"arrays.routing_updates"};
  stats::counter migrations_out{"arrays.migrations_out"};
  stats::counter migrations_in{"arrays.migrations_in"};
  stats::counter held{"arrays.held"};
  stats::counter broadcasts{"arrays.broadcasts"};
  stats::counter reductions{"arrays.reductions"};
  stats::counter cache_expired{"arrays.cache_expired"};
  stats::counter expedited{"arrays.expedited"};
  stats::counter direct{"arrays.direct"};
  stats::counter wait_notices{"arrays.wait_notices"};
};

// The node.
struct runtime {
  int me = 0, nodes = 1;
  std::thread::id scheduler_thread;
  std::vector<std::unique_ptr<array_state>> arrays;  // by id; null once destroyed
  std::vector<array_state*> live;                    // those not destroyed, in creation order
  // Framed messages (a 4-byte length, then the bytes). Vectors, not strings: the scheduler
  // swaps a queue in as its batch for every batch, and a string's swap is an out-of-line call
  // (local_message_us 4-5% slower when the compiler stopped inlining it).
  std::vector<char> inbox;  // under the node lock
  std::vector<char> local;  // messages this node sent itself (scheduler only)
  std::vector<char> batch;  // the messages the scheduler is running
  std::size_t batch_at = 0;
  bool in_entry = false;
  bool in_for_each = false;  // array::for_each_local visits the elements in place
  // Invokes run from the handler (scheduler.cpp): while the scheduler thread waits in
  // run_until with nothing queued, an expedited one runs in the handler, an ordinary one from
  // it with the node lock let go.
  bool waiting = false;         // in run_until's wait (scheduler thread only)
  bool in_handler = false;      // a message runs in the handler now
  bool ran_in_handler = false;  // one has since the wait began
  std::exception_ptr failure;   // what one threw, for run_until to throw
  std::vector<std::pair<int, std::string>> deferred;  // sends that leave when the handler is done
  std::uint64_t next_slot = 1;
  std::unordered_set<std::uint64_t> open_slots;  // requests whose result get() has not taken
  std::unordered_map<std::uint64_t, std::string> done_slots;
  std::unordered_map<std::uint64_t, std::string> failed_slots;  // why the request failed
  // Requests the element's home holds because no such element exists (kind::held): slot ->
  // the element, as get()'s notice names it.
  std::unordered_map<std::uint64_t, std::string> held_slots;
  std::int64_t wait_notice_s = 60;  // squall::wait_notice_seconds() (futures.cpp)
  scheduler_counts counts;
  slot* running = nullptr;  // the element whose entry method runs
  std::vector<std::pair<int, std::string>> lb_reports;  // node 0, during at_sync(): (node, report)
  std::string lb_plan;                  // during at_sync()
  bool lb_plan_here = false;
  // During restart(): the checkpoint's directory and its files' tag, and the first element
  // that did not unpack.
  std::string restore_dir;
  std::string restore_tag;
  std::string restore_problem;
  counters stats;  // SQUALL_STATS (count())
};

// This node's, created on first use (never destroyed). Called on every step of a message:
// after the first, one load.
runtime& make_runtime();
inline std::atomic<runtime*> the_runtime{nullptr};
inline runtime& rt() {
  runtime* r = the_runtime.load(std::memory_order_acquire);
  return r != nullptr ? *r : make_runtime();
}
inline counters& count() { return rt().stats; }
array_state& array_at(std::uint32_t id);  // throws usage_error for an unknown or destroyed array
// Collective: throws on every node the lowest-numbered node's problem (`mine` empty: none).
void agree_on_problem(const runtime& r, const std::string& mine);
// To the node's scheduler (this node's too): the header (its key_bytes set here), key, body.
void send(int node, const header& h, std::string_view key, std::string_view body);
void invoke_entry(element_base& e, const entry_info& method, std::string_view args, std::string* result);
inline void invoke_entry(element_base& e, std::uint64_t entry_id, std::string_view args, std::string* result) {
  invoke_entry(e, entry(entry_id), args, result);
}
void run_callback(std::uint64_t function, std::string_view value);  // a reduction's, as program code

// The scheduler (scheduler.cpp), for the waits built on it (futures.cpp).
// Runs queued messages until done(ctx) holds or none is left; false when there was none.
bool run_some(bool (*done)(void*), void* ctx, bool inbox);
// Runs messages until done(ctx) holds, waiting for more when idle; the wait also ends when
// wake(wake_ctx) holds (asked under the node lock).
void run_until_woken(bool (*done)(void*), void* ctx, bool (*wake)(void*), void* wake_ctx);
bool never(void*);
// run_until_woken until done(ctx) holds (true) or until clock `due` (am::clock_ns), when it
// still does not (false): for a wait that says, once, what it waits for (futures.cpp).
bool run_until_due(std::int64_t due, bool (*done)(void*), void* ctx, bool (*wake)(void*), void* wake_ctx);
std::int64_t notice_due(const runtime& r);  // SQUALL_WAIT_NOTICE_S from now
// quiesce() without its caller's check; for array::destroy() of array `destroying` - 1 when
// that is not 0, which throws on every node, nothing destroyed, unless every node destroys
// that array there.
void quiesce_for(std::uint64_t destroying);
// Throws usage_error when the calling code may not run the scheduler: inside an entry method,
// or on another thread than the program's.
void check_scheduler(const char* what);

// While the program's code runs from the scheduler (an entry method, a hook, a callback): it
// must not wait (in_entry), and what it sends is counted against `element` (running). Undone
// however the code leaves.
class program_code {
 public:
  explicit program_code(slot* element) {
    rt().in_entry = true;
    rt().running = element;
  }
  ~program_code() {
    rt().in_entry = false;
    rt().running = nullptr;
  }
  program_code(const program_code&) = delete;
  program_code& operator=(const program_code&) = delete;
};
[[noreturn]] void protocol_error(const char* what, const message& m);
// Checkpoints (checkpoint.cpp): the path of a node file (`tag` names the checkpoint that wrote
// it, empty in format 2), and a restore message `m` whose element did not unpack, kept for
// restart() to report.
std::string checkpoint_file(const std::string& dir, std::size_t array, int node, const std::string& tag);
void note_restore_problem(std::uint32_t array, const message& m, const squall::usage_error& e);

// Runs f; what it throws is kept in `failed` (the first thing thrown only), so that the steps
// after it still run and the caller throws it at the end.
template <class F>
void keeping_failure(std::exception_ptr& failed, F&& f) {
  try {
    f();
  } catch (...) {
    if (!failed) failed = std::current_exception();
  }
}



}  // namespace squall::arrays::detail
