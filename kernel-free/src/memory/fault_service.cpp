// SPDX-License-Identifier: BSD-3-Clause
#include "memory/fault_service.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <exception>

#include "common/futex.hpp"
#include "common/log.hpp"
#include "memory/counters.hpp"
#include "memory/deferred_maps.hpp"
#include "memory/layer.hpp"
#include "memory/page_tables.hpp"
#include "memory/segment_builder.hpp"
#include "runtime/node.hpp"

namespace squall::memory::detail {
namespace {

// Handlers in progress on this thread: a fault inside one means it touched an
// application view, which would recurse (SIGBUS path) or deadlock (thread path).
thread_local int handlers_running = 0;

// What a fault is served under: this node's faults one at a time (a protocol keeps at most
// one fault of the node in progress), and the node lock when the runtime is up, so that
// fault handlers are atomic with message handlers. The node lock is held for the whole
// protocol handler, also while it waits for replies (its polling then runs the message
// handlers), except while such a wait sleeps (runtime/waiting.cpp).
rt::node_lock faults_one_at_a_time;  // the node lock's class: re-entrant, yields while spinning
std::atomic<std::uint64_t> retirements{0};
// Fills (fill_reported) run outside the fault lock, several at once on the thread path; a
// segment's retirement waits for those in flight before its memory goes.
std::atomic<int> fills_in_flight{0};

class fault_guard {
 public:
  fault_guard() : nd_(rt::current()) {
    faults_one_at_a_time.lock();
    if (nd_ != nullptr) nd_->lock.lock();
  }
  ~fault_guard() {
    if (nd_ != nullptr) nd_->lock.unlock();
    faults_one_at_a_time.unlock();
  }
  fault_guard(const fault_guard&) = delete;
  fault_guard& operator=(const fault_guard&) = delete;

 private:
  rt::node_runtime* nd_;
};

int fault_counter(tag t, bool write) {
  if (!write) return read_faults_on_invalid;
  return t == tag::invalid ? write_faults_on_invalid : write_faults_on_read_only;
}

// A report the thread path took for its faulting thread's (faulter != 0) may be a late one:
// that thread was woken by another fault thread's serving of the same block and has run on,
// perhaps into the node lock. The first such report of a thread and block is therefore only
// woken (the caller serves nothing); the thread, if it really faulted under the lock, faults
// again on the same block and is reported then. Read and written under the fault lock.
struct suspect {
  int tid = 0;
  const segment_state* s = nullptr;
  block_index b = 0;
} last_suspect;

// The faulting thread holds the node lock: see fault_service.hpp. False: nothing to serve.
bool refuse_fault_under_node_lock(int faulter, const segment_state& s, block_index b, bool write) {
  const rt::node_runtime* nd = rt::current();
  const int tid = faulter != 0 ? faulter : rt::node_lock::self();
  if (nd == nullptr || !nd->lock.held_by(tid)) return true;
  if (faulter != 0 && (last_suspect.tid != tid || last_suspect.s != &s || last_suspect.b != b)) {
    last_suspect = {tid, &s, b};
    count(reports_not_served);
    return false;
  }
  fatal_in_signal("a %s of block %zu of the segment at %p faulted while its thread held the node lock "
                  "(inside a message handler or an am::wait_until predicate?); code that runs under "
                  "the node lock must not touch an application view - use the protocol view",
                  write ? "write" : "read", b, static_cast<void*>(s.app));
}

}  // namespace

faults_held_off::faults_held_off() { faults_one_at_a_time.lock(); }
faults_held_off::~faults_held_off() { faults_one_at_a_time.unlock(); }

void retire_from_faults(segment_state& s) {
  faults_held_off no_fault_in_flight;
  s.retiring.store(true, std::memory_order_seq_cst);
  retirements.fetch_add(1, std::memory_order_seq_cst);
  // A fill that began before this saw neither and may still be allocating the segment's
  // pages, and a handler's deferred mapping may still be mapping them: wait for both (each
  // takes well under a millisecond and holds no lock).
  wait_for_deferred_maps(s);
  while (fills_in_flight.load(std::memory_order_seq_cst) != 0) sched_yield();
}

namespace {

// Counts a fill in flight for its scope: a retirement that begins meanwhile waits for it.
class fill_in_flight {
 public:
  fill_in_flight() { fills_in_flight.fetch_add(1, std::memory_order_seq_cst); }
  ~fill_in_flight() { fills_in_flight.fetch_sub(1, std::memory_order_seq_cst); }
  fill_in_flight(const fill_in_flight&) = delete;
  fill_in_flight& operator=(const fill_in_flight&) = delete;
};

// The fill itself, counted in flight by the caller, who has seen that `s` is not retiring.
void fill_run(segment_state& s, block_index b) {
  if (s.fill_blocks <= 1 || s.tags[b].load(std::memory_order_acquire) != tag::invalid) return;
  const block_index first = b - b % s.fill_blocks;
  fill_pages(s, first, std::min(s.fill_blocks, s.blocks - first));
  count(fills_around);
}

}  // namespace

// Nothing is read of a segment before this fill counts as in flight and has seen that no
// retirement began since `retirements_before` (a report read then may concern a range that
// another segment holds by now).
void fill_reported(const void* address, std::uint64_t retirements_before) {
  const fill_in_flight counted;
  if (retirements.load(std::memory_order_seq_cst) != retirements_before) return;
  segment_state* s = find_segment(address);
  if (s != nullptr && !s->retiring.load(std::memory_order_seq_cst)) fill_run(*s, s->block_of(address));
}

namespace {
void serve_filled(segment_state& s, block_index b, bool write, int faulter);
}  // namespace

std::uint64_t retirements_begun() { return retirements.load(std::memory_order_relaxed); }

wake_range serve_reported_fault(const void* address, bool write, int faulter,
                                 std::uint64_t retirements_before_read) {
  faults_held_off no_free;  // re-entrant: serve_fault takes it again
  if (retirements.load(std::memory_order_relaxed) != retirements_before_read) {
    count(reports_not_served);
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    return {reinterpret_cast<std::byte*>(reinterpret_cast<std::uintptr_t>(address) & ~(page - 1)), page};
  }
  segment_state* s = find_segment(address);
  if (s == nullptr || s->retiring.load(std::memory_order_relaxed)) return {};
  const block_index b = s->block_of(address);
  serve_filled(*s, b, write, faulter);
  return {s->app_block(b), s->block_size};
}

void serve_fault(segment_state& s, block_index b, bool write, int faulter) {
  if (s.fill_blocks > 1 && s.tags[b].load(std::memory_order_acquire) == tag::invalid) {
    const fill_in_flight counted;
    if (!s.retiring.load(std::memory_order_seq_cst)) fill_run(s, b);
  }
  serve_filled(s, b, write, faulter);
  map_deferred();  // the locks are let go: side by side with other threads' faults
}

namespace {

// An exception left the protocol's fault handler: it cannot reach the faulting access (a
// signal handler or another thread ran the handler), so the node ends, saying whose it was.
// Before, the node ended through std::terminate with only the exception's what().
[[noreturn]] void handler_threw(const segment_state& s, block_index b, bool write, const char* what) {
  fatal_in_signal("the protocol's %s fault handler threw for block %zu of the segment at %p: %s (a fault "
                  "handler cannot throw to the faulting access: it must raise the tag, or end the program)",
                  write ? "write" : "read", b, static_cast<void*>(s.app), what);
}

void run_handler(protocol& p, segment_state& s, block_index b, bool write) {
  try {
    if (write) {
      p.write_fault(segment_builder::handle(s), b);
    } else {
      p.read_fault(segment_builder::handle(s), b);
    }
  } catch (const std::exception& e) {
    handler_threw(s, b, write, e.what());
  } catch (...) {
    handler_threw(s, b, write, "an exception that is not a std::exception");
  }
}

// serve_fault once the run around b was filled, but for the mapping of what the handler
// raised in runs (deferred_maps.hpp), left to the caller.
void serve_filled(segment_state& s, block_index b, bool write, int faulter) {
  if (handlers_running > 0) {
    fatal_in_signal("a fault handler touched the application view (block %zu of the segment at %p, tag "
          "%s); protocol code must use the protocol view",
          b, static_cast<void*>(s.app), tag_name(s.tags[b].load(std::memory_order_acquire)));
  }
  if (!refuse_fault_under_node_lock(faulter, s, b, write)) return;
  fault_guard guard;  // first: a handler that ran meanwhile may have raised the tag
  const tag before = s.tags[b].load(std::memory_order_acquire);
  const int uffd = s.uffd_of(b);
  if (allows(before, write)) {
    map_block(uffd, s, b, before == tag::read_only);
    count(pages_mapped_on_touch);
    return;
  }
  protocol* p = s.handler.load(std::memory_order_acquire);
  if (p == nullptr) {
    fatal_in_signal("a %s of block %zu of the segment at %p faulted (tag %s), but no protocol is bound "
          "to the segment",
          write ? "write" : "read", b, static_cast<void*>(s.app), tag_name(before));
  }
  count(fault_counter(before, write));
  ++handlers_running;
  const std::int64_t start = now_ns();
  {
    mapping_deferred after_the_locks;  // runs it raises are mapped by map_deferred
    run_handler(*p, s, b, write);
  }
  count(fault_handler_ns, static_cast<std::uint64_t>(now_ns() - start));
  --handlers_running;
  const tag after = s.tags[b].load(std::memory_order_acquire);
  if (!allows(after, write)) {
    fatal_in_signal("the %s fault handler returned without raising the tag of block %zu of the segment at "
          "%p (tag %s; the access needs %s)",
          write ? "write" : "read", b, static_cast<void*>(s.app), tag_name(after),
          write ? "ReadWrite" : "ReadOnly or ReadWrite");
  }
}

}  // namespace

}  // namespace squall::memory::detail
