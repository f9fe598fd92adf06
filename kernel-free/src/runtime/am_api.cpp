// SPDX-License-Identifier: BSD-3-Clause
// The public active-message calls: check the caller, take the node lock, call the engine.
#include <squall/am.hpp>

#include "common/log.hpp"
#include "memory/shared_access.hpp"
#include "runtime/node.hpp"
#include "runtime/wait_notice.hpp"
#include "transport/quiet_sends.hpp"

namespace squall::am {
namespace {

rt::node_runtime& checked(const char* api, int dest) {
  rt::node_runtime& nd = rt::require_fast(api);
  if (static_cast<unsigned>(dest) >= static_cast<unsigned>(nd.n)) [[unlikely]] {
    throw usage_error(format("%s: node %d does not exist (the job has nodes 0..%d)", api, dest, nd.n - 1));
  }
  return nd;
}

// Keeps a fast sender from queueing without bound: outside handlers, a sender whose queue
// to dest is past the engine's backlog limit waits until the queue has drained.
void drain_backlog(rt::node_runtime& nd, int dest) {
  if (engine::in_handler()) return;
  struct ctx_t {
    rt::node_runtime* nd;
    int dest;
  } ctx{&nd, dest};
  rt::wait_until(
      nd, [](void* c) {
        auto* x = static_cast<ctx_t*>(c);
        return x->nd->engine->queued_bytes(x->dest) == 0;
      },
      &ctx);
}

// A payload in a shared segment is made readable through its protocol (which may send and
// wait) before the node lock is taken, and then read through the protocol view: code under
// the node lock never touches an application view, so a fault handler never finds the lock
// held by the thread it interrupted (memory/fault_service.hpp).
payload lock_safe(payload data) {
  if (data.empty()) return data;
  return payload(memory::detail::readable_source(data.data(), data.size()), data.size());
}

}  // namespace

namespace detail {

namespace {

// What stage_send could not finish alone: a full stage, or a send that is not staged.
[[gnu::noinline]] void send_locked(rt::node_runtime& nd, int dest, const handler_entry* h, const void* args,
                                   std::size_t args_len, payload data, std::uint32_t reply_slot,
                                   engine::staging staged) {
  if (staged == engine::staging::no_room) {  // the stage is flushed, then there is room
    rt::locked(nd, [&] { nd.engine->flush_stage(dest); });
    staged = nd.engine->stage_send(dest, *h, args, args_len, data);
  }
  bool backlog = false;
  if (staged == engine::staging::flush_needed) {
    backlog = rt::locked(nd, [&] { return nd.engine->flush_stage(dest); });
  } else if (staged != engine::staging::staged) {
    data = lock_safe(data);
    backlog = rt::locked(nd, [&] { return nd.engine->send(dest, *h, args, args_len, data, reply_slot); });
  }
  if (backlog) [[unlikely]] drain_backlog(nd, dest);
}

}  // namespace

void send_raw(int dest, const handler_entry* h, const void* args, std::size_t args_len, payload data,
              std::uint32_t reply_slot) {
  rt::node_runtime& nd = checked("am::send", dest);
  // A small record with nothing waiting ahead of it goes straight into the peer's mailbox
  // (am/engine.hpp, the mailbox lane). Aggregated sends are staged instead (below), and must
  // not pay for the lock here.
  if (engine::fits_mail(args_len, data.size()) && nd.engine->aggregation() == 1) {
    const payload readable = lock_safe(data);
    nd.lock.lock();
    const bool sent = nd.engine->send_mail(dest, *h, args, args_len, readable, reply_slot);
    nd.lock.unlock();
    if (sent) return;
  }
  // The runtime's own thread, aggregating, outside handlers and the node lock (a fault
  // handler holds it), with a payload in private memory: staged without the node lock
  // (am/stage.hpp). Everything else, and a full stage, takes the lock.
  engine::staging staged = engine::staging::not_staged;
  if (reply_slot == 0 && nd.engine->aggregation() != 1 && engine::stage_owner() && !engine::in_handler() &&
      (data.empty() || !memory::detail::in_segment_range(data.data(), data.size())) &&
      !nd.lock.held_by_this_thread()) {
    staged = nd.engine->stage_send(dest, *h, args, args_len, data);
    if (staged == engine::staging::staged) [[likely]] return;
  }
  send_locked(nd, dest, h, args, args_len, data, reply_slot, staged);
}

void send_written_raw(int dest, const handler_entry* h, const void* args, std::size_t args_len,
                      std::size_t size, void (*write)(void* ctx, std::byte* out), void* ctx) {
  rt::node_runtime& nd = checked("am::send_written", dest);
  const bool backlog = rt::locked(
      nd, [&] { return nd.engine->send_written(dest, *h, args, args_len, size, body_writer{write, ctx}, 0); });
  if (backlog) [[unlikely]] drain_backlog(nd, dest);
}

void send_reply(int dest, std::uint32_t slot, const void* result, std::size_t size) {
  rt::node_runtime& nd = checked("am::call (reply)", dest);
  const std::uint64_t padded_slot = slot;  // argument buffers are read in whole words
  rt::locked(nd, [&] {
    nd.engine->send(dest, reply_handler, &padded_slot, sizeof slot,
                    payload(static_cast<const std::byte*>(result), size), 0);
  });
}

std::uint32_t open_reply_slot(void* result, std::size_t size) {
  rt::node_runtime& nd = rt::require("am::call");
  if (engine::in_handler()) {
    fatal("a handler tried to wait (am::call inside a handler); handlers may only send - reply "
          "with a message instead");
  }
  return rt::locked(nd, [&] { return nd.engine->open_slot(result, size); });
}

void wait_reply(std::uint32_t slot) {
  rt::node_runtime& nd = rt::require("am::call");
  struct ctx_t {
    rt::node_runtime* nd;
    std::uint32_t slot;
  } ctx{&nd, slot};
  rt::wait_until(
      nd, [](void* c) {
        auto* x = static_cast<ctx_t*>(c);
        return x->nd->engine->slot_done(x->slot);
      },
      &ctx);
  rt::locked(nd, [&] { nd.engine->close_slot(slot); });
}

void wait_until(bool (*pred)(void*), void* ctx) { rt::wait_until(rt::require("am::wait_until"), pred, ctx); }

void wait_until_noticed(bool (*pred)(void*), void* ctx, std::string (*describe)(void*), void* describe_ctx) {
  rt::node_runtime& nd = rt::require("am::wait_until_noticed");
  struct wait {
    bool (*pred)(void*);
    void* ctx;
    std::string (*describe)(void*);
    void* describe_ctx;
    rt::wait_notice notice;
  } w{pred, ctx, describe, describe_ctx, rt::wait_notice(nd)};
  rt::wait_until(
      nd,
      [](void* p) {
        auto& x = *static_cast<wait*>(p);
        if (x.pred(x.ctx)) return true;
        if (x.notice.looked_in_vain()) {
          rt::count_notice();
          warn("has waited %lld s for %s; still waiting (SQUALL_WAIT_NOTICE_S)",
               static_cast<long long>(x.notice.seconds()), x.describe(x.describe_ctx).c_str());
        }
        return false;
      },
      &w);
}

}  // namespace detail

std::int64_t clock_ns() { return now_ns(); }

void call_at(std::int64_t deadline_ns, void (*fn)(void*), void* ctx) {
  rt::node_runtime& nd = rt::require("am::call_at");
  rt::locked(nd, [&] { nd.engine->call_at(deadline_ns, fn, ctx); });
  // A progress thread asleep with a later timeout must look again.
  if (nd.control().sleepers.load() > 0) {
    nd.control().doorbell.fetch_add(1);
    futex_wake_all(&nd.control().doorbell);
  }
}

void wake_waiters() {
  rt::node_runtime& nd = rt::require("am::wake_waiters");
  if (nd.sleeping_waiters.load() == 0) return;
  rt::locked(nd, [&] { rt::wake_sleeping_waiters(nd); });
}

void run_locked(void (*fn)(void*), void* ctx) {
  rt::node_runtime& nd = rt::require("am::run_locked");
  rt::locked(nd, [&] { nd.engine->run_as_handler(fn, ctx); });
}

bool run_unlocked_in_handler(void (*fn)(void*), void* ctx) {
  rt::node_runtime* nd = rt::running_node.load(std::memory_order_acquire);
  if (nd == nullptr || !rt::can_step_out_of_wait(*nd)) return false;
  return nd->engine->run_outside_handler(fn, ctx,
                                         [nd](void (*f)(void*), void* c) { rt::step_out_of_wait(*nd, f, c); });
}

namespace detail {

bulk_handle bulk_send_raw(int dest, const handler_entry* h, const void* args, std::size_t args_len,
                          payload data) {
  rt::node_runtime& nd = checked("am::bulk_send", dest);
  data = lock_safe(data);  // streamed later, under the lock, from the protocol view
  auto state = rt::locked(nd, [&] { return nd.engine->bulk_send(dest, *h, args, args_len, data); });
  return bulk_handle(std::move(state));
}

}  // namespace detail

bool bulk_handle::local_done() const { return !state_ || state_->local.load(std::memory_order_acquire); }
bool bulk_handle::remote_done() const { return !state_ || state_->remote.load(std::memory_order_acquire); }

void bulk_handle::wait_local() {
  if (local_done()) return;
  detail::wait_until([](void* s) { return static_cast<bulk_handle*>(s)->local_done(); }, this);
}

void bulk_handle::wait_remote() {
  if (remote_done()) return;
  detail::wait_until([](void* s) { return static_cast<bulk_handle*>(s)->remote_done(); }, this);
}

quiet_sends::quiet_sends() : was_(transport_detail::sending_quietly) { transport_detail::sending_quietly = true; }
quiet_sends::~quiet_sends() { transport_detail::sending_quietly = was_; }

void flush() {
  rt::node_runtime& nd = rt::require("am::flush");
  rt::locked(nd, [&] { nd.engine->flush_all(); });
}

void flush(int dest) {
  rt::node_runtime& nd = checked("am::flush", dest);
  rt::locked(nd, [&] {
    nd.engine->flush(dest);
    nd.engine->push_queued();
  });
}

void set_aggregation(unsigned messages_per_packet) {
  rt::node_runtime& nd = rt::require("am::set_aggregation");
  if (messages_per_packet < 1 || messages_per_packet > 4096) {
    throw usage_error(format("am::set_aggregation: %u messages per packet is outside 1..4096", messages_per_packet));
  }
  rt::locked(nd, [&] {
    nd.engine->set_aggregation(messages_per_packet);
    nd.engine->flush_all();
  });
}

unsigned aggregation() { return rt::require("am::aggregation").engine->aggregation(); }
std::size_t max_payload() { return rt::require("am::max_payload").engine->max_payload(); }

void poll() {
  rt::node_runtime& nd = rt::require("am::poll");
  rt::locked(nd, [&] { nd.engine->poll(); });
}

}  // namespace squall::am
