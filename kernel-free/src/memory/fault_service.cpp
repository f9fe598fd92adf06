#include "memory/fault_service.hpp"

#include "common/futex.hpp"
#include "common/log.hpp"
#include "memory/counters.hpp"
#include "memory/layer.hpp"
#include "memory/page_tables.hpp"
#include "memory/segment_builder.hpp"
#include "runtime/node.hpp"

namespace squall::memory::detail {
namespace {

// Handlers in progress on this thread: a fault inside one means it touched an
// application view, which would recurse (SIGBUS path) or deadlock (thread path).
thread_local int handlers_running = 0;

// The node lock, when the runtime is up (it is re-entrant, and the interrupted code may
// hold it: see the report on the message layer).
class node_lock_guard {
 public:
  node_lock_guard() : nd_(rt::current()) {
    if (nd_ != nullptr) nd_->lock.lock();
  }
  ~node_lock_guard() {
    if (nd_ != nullptr) nd_->lock.unlock();
  }
  node_lock_guard(const node_lock_guard&) = delete;
  node_lock_guard& operator=(const node_lock_guard&) = delete;

 private:
  rt::node_runtime* nd_;
};

int fault_counter(tag t, bool write) {
  if (!write) return read_faults_on_invalid;
  return t == tag::invalid ? write_faults_on_invalid : write_faults_on_read_only;
}

}  // namespace

void serve_fault(segment_state& s, block_index b, bool write) {
  node_lock_guard guard;  // first: a handler that ran meanwhile may have raised the tag
  const tag before = s.tags[b].load(std::memory_order_acquire);
  if (handlers_running > 0) {
    fatal_in_signal("a fault handler touched the application view (block %zu of the segment at %p, tag "
          "%s); protocol code must use the protocol view",
          b, static_cast<void*>(s.app), tag_name(before));
  }
  const int uffd = running_layer()->uffd.fd;
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
  if (write) {
    p->write_fault(segment_builder::handle(s), b);
  } else {
    p->read_fault(segment_builder::handle(s), b);
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

}  // namespace squall::memory::detail
