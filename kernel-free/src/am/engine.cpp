// SPDX-License-Identifier: BSD-3-Clause
#include "am/engine.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>

#include "am/records.hpp"
#include "am/registry.hpp"
#include "common/futex.hpp"
#include "common/log.hpp"
#include "stats/counters.hpp"

namespace squall::am {
namespace {


const int packets_sent = stats::counter_slot("am.packets_sent");
const int packets_received = stats::counter_slot("am.packets_received");
const int packets_queued = stats::counter_slot("am.packets_queued");
const int bulk_transfers = stats::counter_slot("am.bulk_transfers");
const int bulk_fragments = stats::counter_slot("am.bulk_fragments");

using detail::round8;

void count(int slot, std::uint64_t n = 1) { stats::bump(stats::counter_at(slot), n); }

}  // namespace

engine* current_engine = nullptr;  // set by the runtime; used by the internal handlers

void engine::count_packet_sent() { count(packets_sent); }
void engine::count_packet_received() { count(packets_received); }

namespace {
void on_bulk_fragment(token& t, handler_id target, std::uint32_t op, std::uint64_t total,
                      std::uint32_t args_len, std::uint64_t offset, payload bytes) {
  current_engine->bulk_fragment(t.source(), target, op, total, args_len, offset, bytes);
}
void on_bulk_ack(token&, std::uint32_t op) { current_engine->bulk_acked(op); }
void on_reply(token&, std::uint32_t slot, payload result) { current_engine->complete_slot(slot, result); }

const handler_entry& bulk_fragment_handler = *register_runtime_handler<&on_bulk_fragment>("squall.am.bulk_fragment");
const handler_entry& bulk_ack_handler = *register_runtime_handler<&on_bulk_ack>("squall.am.bulk_ack");
}  // namespace

const handler_entry& reply_handler = *register_runtime_handler<&on_reply>("squall.am.reply");


engine::engine(transport& t, int me, int nodes)
    : t_(t),
      nodes_(nodes),
      max_packet_(t.max_packet()),
      max_payload_(t.max_packet() - sizeof(record_header) - detail::max_args_bytes),
      // A sender outside handlers waits when more than a few packets' worth is queued.
      backlog_limit_(4 * t.max_packet()),
      out_(static_cast<std::size_t>(nodes)),
      in_bulk_(static_cast<std::size_t>(nodes)),
      slots_(1) {  // slot 0 means "no reply"
  for (auto& o : out_) o.buffer.reset(new std::byte[max_packet_]);
  stages_.reset(new stage[static_cast<std::size_t>(nodes)]);
  for (int d = 0; d < nodes; ++d) stages_[d].init(max_packet_);
  for (int i = 1; i <= nodes; ++i) poll_order_.push_back((me + i) % nodes);
  for (int peer = 0; peer < nodes; ++peer) {
    shm::shm_transport* lane = peer == me ? nullptr : t.mailbox_lane(peer);
    lane_to_.push_back(lane);
    if (lane == nullptr) continue;
    if (mail_ != nullptr && mail_ != lane) fatal("internal error: two transports offer a mailbox lane");
    mail_ = lane;
    mail_peers_.push_back(peer);
  }
  mail_is_transport_ = mail_ != nullptr && static_cast<transport*>(mail_) == &t;
}

void engine::payload_too_large(const handler_entry& e, std::size_t size) const {
  throw usage_error(format("am::send to %.*s: payload of %zu bytes exceeds the limit of %zu bytes "
                           "(am::max_payload(); use am::bulk_send for larger data)",
                           static_cast<int>(e.name.size()), e.name.data(), size, max_payload_));
}

void engine::flush(int dest) {
  outgoing& o = out_[dest];
  if (!stages_[dest].empty()) {
    // Only staged records: they leave as they are, without a copy into the packet buffer.
    const auto staged = stages_[dest].published();
    if (o.count == 0 && o.queue.empty() && !staged.bytes.empty() && t_.try_send(dest, staged.bytes, {})) {
      take_staged(dest, staged);
      count(packets_sent);
      return;
    }
    drain_stage(dest);
  }
  send_buffer(dest);
}

void engine::drain_stage(int dest) {
  stage& s = stages_[dest];
  const auto staged = s.published();
  const std::size_t n = staged.bytes.size();
  if (n == 0) return;
  outgoing& o = out_[dest];
  if (o.used + n > max_packet_) send_buffer(dest);
  if (o.count == 0 && o.queue.empty()) add_unsent(1);
  std::memcpy(o.buffer.get() + o.used, staged.bytes.data(), n);
  o.used += n;
  ++o.count;  // at least one record: what matters here is that the packet is not empty
  take_staged(dest, staged);
}

void engine::take_staged(int dest, const stage::portion& staged) {
  stages_[dest].take(staged);
  drained_bytes_.store(drained_bytes_.load(std::memory_order_relaxed) + staged.bytes.size(),
                       std::memory_order_relaxed);
}

bool engine::flush_stage(int dest) {
  flush(dest);
  stages_[dest].reset();
  return out_[dest].queued_bytes > backlog_limit_;
}

void engine::send_buffer(int dest) {
  outgoing& o = out_[dest];
  if (o.count == 0) return;
  const std::span<const std::byte> packet(o.buffer.get(), o.used);
  if (o.queue.empty() && t_.try_send(dest, packet, {})) {
    count(packets_sent);
  } else {
    // Allocates: a fault handler's send (signal context) reaches here only on a full ring.
    queued q;
    q.packet.assign(packet.begin(), packet.end());
    o.queued_bytes += q.packet.size();
    o.queue.push_back(std::move(q));
    count(packets_queued);
  }
  o.used = 0;
  o.count = 0;
  o.by_handler = false;
  if (o.queue.empty()) add_unsent(-1);
}

bool engine::send_written(int dest, const handler_entry& e, const void* args, std::size_t args_len,
                          std::size_t size, body_writer write, std::uint32_t reply_slot) {
  if (size > max_payload_) [[unlikely]] payload_too_large(e, size);
  if (mail_possible(dest, args_len, size)) {
    if (put_mail(dest, e, args, args_len, size, write, reply_slot)) return false;
    write(append_record(dest, e, args, args_len, size, reply_slot));  // not our turn
    return finish_record(dest, e, args_len + size);
  }
  if (size < direct_payload_bytes) {
    write(append_record(dest, e, args, args_len, size, reply_slot));
    return finish_record(dest, e, args_len + size);
  }
  flush(dest);  // what was sent before goes first
  outgoing& o = out_[dest];
  alignas(8) std::byte head[sizeof(record_header) + detail::max_args_bytes];
  const std::size_t head_len = write_head(head, e, args, args_len, size, reply_slot);
  if (o.queue.empty() && t_.try_send_written(dest, std::span(head, head_len), size, write)) {
    count(packets_sent);
  } else {
    // Allocates, like a queued packet in flush().
    queued q;
    q.packet.resize(head_len + size);
    std::memcpy(q.packet.data(), head, head_len);
    write(q.packet.data() + head_len);
    if (o.queue.empty()) add_unsent(1);
    o.queued_bytes += q.packet.size();
    o.queue.push_back(std::move(q));
    count(packets_queued);
  }
  count_sent(e, args_len + size);
  return o.queued_bytes > backlog_limit_;
}

void engine::flush_all() {
  if (!has_unsent()) return;
  for (int d = 0; d < nodes_; ++d) flush(d);
  push_queued();
}

std::shared_ptr<detail::bulk_state> engine::bulk_send(int dest, const handler_entry& h_entry,
                                                      const void* args, std::size_t args_len,
                                                      payload data) {
  const handler_entry* e = &h_entry;
  const handler_id id = e->id;
  flush(dest);  // what was sent before goes first
  outgoing& o = out_[dest];
  const bool was_empty = o.count == 0 && o.queue.empty();
  auto state = std::make_shared<detail::bulk_state>();
  queued q;
  q.bulk = state;
  q.target = id;
  q.op = next_bulk_op_++;
  if (next_bulk_op_ == 0) next_bulk_op_ = 1;
  q.args.assign(static_cast<const std::byte*>(args), static_cast<const std::byte*>(args) + args_len);
  q.data = data.data();
  q.size = data.size();
  bulk_in_flight_[q.op] = state;
  o.queued_bytes += q.size;
  o.queue.push_back(std::move(q));
  if (was_empty) add_unsent(1);

  auto& hs = stats::handler_at(e->index);
  stats::bump(hs.sent);
  stats::bump(hs.sent_bytes, args_len + data.size());
  count(bulk_transfers);
  if (!e->internal) stats::bump(user_sent_);
  push_queued();
  return state;
}

bool engine::push_bulk(int dest, queued& q) {
  const handler_id fragment_id = bulk_fragment_handler.id;
  do {
    // Head: record header, the fragment's own arguments, and (first fragment only) the
    // target handler's arguments; body: the next chunk of the caller's buffer.
    struct fragment_args {
      handler_id target;
      std::uint32_t op;
      std::uint64_t total;
      std::uint32_t args_len;
      std::uint64_t offset;
    };
    constexpr std::size_t frag_args_len = detail::packed_size<
        std::tuple<handler_id, std::uint32_t, std::uint64_t, std::uint32_t, std::uint64_t>>();
    const bool first = q.sent == 0;
    const std::size_t extra = first ? q.args.size() : 0;
    const std::size_t head_fixed = sizeof(record_header) + round8(frag_args_len);
    // A transfer that would take several fragments goes whole where the transport can send
    // it without a copy (UCX's rendezvous): one fragment, read from the caller's buffer.
    const bool whole = first && q.size > max_packet_ - head_fixed - extra && extra + q.size <= UINT32_MAX &&
                       t_.sends_large(dest);
    const std::size_t chunk = whole ? q.size : std::min(q.size - q.sent, max_packet_ - head_fixed - extra);
    std::byte head[sizeof(record_header) + 64 + detail::max_args_bytes];
    const record_header h{fragment_id, static_cast<std::uint32_t>(frag_args_len),
                          static_cast<std::uint32_t>(extra + chunk), 0};
    std::memcpy(head, &h, sizeof h);
    detail::pack<std::tuple<handler_id, std::uint32_t, std::uint64_t, std::uint32_t, std::uint64_t>>(
        head + sizeof h, q.target, q.op, static_cast<std::uint64_t>(q.size),
        static_cast<std::uint32_t>(q.args.size()), static_cast<std::uint64_t>(q.sent));
    if (extra != 0) std::memcpy(head + head_fixed, q.args.data(), extra);
    if (whole) {
      // The transport tells when it has read the buffer: that is local completion.
      auto* keep = new std::shared_ptr<detail::bulk_state>(q.bulk);
      auto done = [](void* ctx) {
        auto* state = static_cast<std::shared_ptr<detail::bulk_state>*>(ctx);
        (*state)->local.store(true, std::memory_order_release);
        delete state;
      };
      if (!t_.try_send_large(dest, std::span(head, head_fixed + extra), std::span(q.data, chunk), done, keep)) {
        delete keep;
        return false;
      }
      q.whole = true;
      q.sent = chunk;
      out_[dest].queued_bytes -= chunk;
      count(packets_sent);
      count(bulk_fragments);
      ++pushed_;
      return true;
    }
    if (!t_.try_send(dest, std::span(head, head_fixed + extra), std::span(q.data + q.sent, chunk))) {
      return false;
    }
    q.sent += chunk;
    out_[dest].queued_bytes -= chunk;
    count(packets_sent);
    count(bulk_fragments);
    ++pushed_;
  } while (q.sent < q.size);
  return true;
}

void engine::push_queued() {
  if (!has_unsent()) {
    if (sends_stalled_.load(std::memory_order_relaxed)) sends_stalled_.store(false, std::memory_order_relaxed);
    return;
  }
  const std::uint64_t before = pushed_;
  bool refused = false;
  for (int d = 0; d < nodes_; ++d) {
    outgoing& o = out_[d];
    if (o.queue.empty()) continue;
    while (!o.queue.empty()) {
      queued& q = o.queue.front();
      if (q.bulk) {
        if (!push_bulk(d, q)) {
          refused = true;
          break;
        }
        if (!q.whole) q.bulk->local.store(true, std::memory_order_release);  // else when the transport says
      } else {
        if (!t_.try_send(d, q.packet, {})) {
          refused = true;
          break;
        }
        o.queued_bytes -= q.packet.size();
        count(packets_sent);
        ++pushed_;
      }
      o.queue.pop_front();
    }
    if (o.queue.empty() && o.count == 0) add_unsent(-1);
  }
  sends_stalled_.store(refused && pushed_ == before, std::memory_order_relaxed);
}

void engine::call_at(std::int64_t deadline_ns, void (*fn)(void*), void* ctx) {
  for (deferred_call& c : calls_) {
    if (c.fn != nullptr) continue;
    c = {deadline_ns, fn, ctx};
    if (deadline_ns < next_deadline_.load(std::memory_order_relaxed)) {
      next_deadline_.store(deadline_ns, std::memory_order_relaxed);
    }
    return;
  }
  fatal("more than %zu deferred calls (am::call_at) pending on this node", calls_.size());
}

void engine::run_due_calls() {
  const std::int64_t now = now_ns();
  std::int64_t next = INT64_MAX;
  for (deferred_call& c : calls_) {
    if (c.fn == nullptr) continue;
    if (c.deadline > now) {
      next = std::min(next, c.deadline);
      continue;
    }
    const deferred_call due = c;
    c.fn = nullptr;
    run_as_handler(due.fn, due.ctx);
  }
  // A call may have added another: take the minimum with what is pending now.
  for (const deferred_call& c : calls_) {
    if (c.fn != nullptr) next = std::min(next, c.deadline);
  }
  next_deadline_.store(next, std::memory_order_relaxed);
}

std::size_t engine::poll() {
  bool satisfied = false;
  return poll_until(nullptr, nullptr, satisfied);
}

std::size_t engine::poll_until(bool (*pred)(void*), void* ctx, bool& satisfied) {
  satisfied = false;
  if (running_handler_) return 0;
  if (next_deadline_.load(std::memory_order_relaxed) != INT64_MAX) run_due_calls();
  std::size_t handled = 0;
  // A waiter whose condition holds after a packet goes back to its program at once; what
  // else arrived is handled at its next poll (or by the progress thread).
  auto handle_arrived = [&] {
    for (const int src : poll_order_) {
      for (int budget = 64; budget > 0; --budget) {
        const auto packet = t_.peek(src);
        if (packet.empty()) break;
        dispatch_packet(src, packet);
        t_.release(src);
        count(packets_received);
        ++handled;
        if (pred != nullptr && pred(ctx)) return true;
      }
    }
    return false;
  };
  // Mailbox packets first, without virtual calls: the small requests and replies of
  // request/reply exchanges (taken only when nothing in the ring is ahead of them).
  if (mail_ != nullptr) {
    for (const int src : mail_peers_) {
      const auto packet = mail_->take_mail(src);
      if (packet.empty()) continue;
      dispatch_one(src, packet);
      count(packets_received);
      ++handled;
      if (pred != nullptr && pred(ctx)) {
        satisfied = true;
        break;
      }
    }
  }
  if (!satisfied) satisfied = handle_arrived();
  if (handled != 0) after_handling();
  push_queued();
  if (pred != nullptr && !satisfied) satisfied = pred(ctx);
  return handled;
}

void engine::handler_failed(const handler_entry& e, const std::exception& ex) {
  fatal("active-message handler %.*s failed: %s", static_cast<int>(e.name.size()), e.name.data(), ex.what());
}

void engine::after_handling() {
  handled_epoch_.store(handled_epoch_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  flush_handler_sends();
  if (on_handled_ != nullptr) on_handled_(on_handled_ctx_);
}

void engine::flush_handler_sends() {
  if (!has_unsent()) return;
  for (int d = 0; d < nodes_; ++d) {
    if (out_[d].by_handler) flush(d);
  }
  push_queued();
}

void engine::run_as_handler(void (*fn)(void*), void* ctx) {
  const bool nested = running_handler_;
  running_handler_ = true;  // it may send, not wait
  fn(ctx);
  running_handler_ = nested;
  // What it sent leaves now, as a handler's sends do when its packet is done: nothing else
  // would send it before the aggregation factor fills (a waiter that waits on its answer
  // would wait for ever).
  if (!nested) flush_handler_sends();
}

void engine::dispatch_packet(int src, std::span<const std::byte> packet) {
  record_reader records(packet);
  // Packets often hold runs of one handler: it is looked up, and counted, once a run.
  const handler_entry* e = nullptr;
  std::uint64_t run = 0, run_bytes = 0;
  token t(src);
  const bool nested = running_handler_;  // a bulk delivery runs inside its fragment's handler
  running_handler_ = true;
  try {
    record_view r;
    while (records.next(r)) {
      if (e == nullptr || e->id != r.h.handler) {
        if (e != nullptr) count_received(*e, run, run_bytes);
        e = lookup(src, r.h.handler);
        run = run_bytes = 0;
      }
      e->fn(t, e->ctx, r.args, r.h.args_len, payload(r.data, r.h.payload_len), r.h.reply_slot);
      ++run;
      run_bytes += r.h.args_len + r.h.payload_len;
    }
    if (records.error() != nullptr) fatal("corrupt packet from node %d (%s)", src, records.error());
  } catch (const std::exception& ex) {
    fatal("active-message handler %.*s failed: %s", static_cast<int>(e->name.size()), e->name.data(), ex.what());
  }
  running_handler_ = nested;
  if (e != nullptr) count_received(*e, run, run_bytes);
}

void engine::count_received(const handler_entry& e, std::uint64_t messages, std::uint64_t bytes) {
  auto& hs = stats::handler_at(e.index);
  stats::bump(hs.received, messages);
  stats::bump(hs.received_bytes, bytes);
  if (!e.internal) stats::bump(user_handled_, messages);
}

const handler_entry* engine::lookup(int src, handler_id id) {
  const handler_entry* e = find_handler(id);
  if (e == nullptr) {
    fatal("received an active message for handler id %#x from node %d, but no handler with that "
          "id is registered here (do all nodes run the same program?)",
          id, src);
  }
  return e;
}

void engine::run_handler(int src, const handler_entry& e, const record_header& h,
                         const std::byte* args, payload data) {
  token t(src);
  const bool nested = running_handler_;  // a bulk delivery runs inside its fragment's handler
  running_handler_ = true;
  try {
    e.fn(t, e.ctx, args, h.args_len, data, h.reply_slot);
  } catch (const std::exception& ex) {
    fatal("active-message handler %.*s failed: %s", static_cast<int>(e.name.size()), e.name.data(),
          ex.what());
  }
  running_handler_ = nested;
  count_received(e, 1, h.args_len + data.size());  // after the handler: its reply leaves sooner
}

std::uint32_t engine::open_slot(void* result, std::size_t size) {
  std::uint32_t s;
  if (free_slots_.empty()) {
    s = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();  // allocates: more calls in flight than ever before
  } else {
    s = free_slots_.back();
    free_slots_.pop_back();
  }
  slots_[s] = slot_state{result, size, true, false};
  return s;
}

void engine::close_slot(std::uint32_t slot) {
  slots_[slot] = slot_state{};
  free_slots_.push_back(slot);
}

void engine::complete_slot(std::uint32_t slot, payload result) {
  if (slot == 0 || slot >= slots_.size() || !slots_[slot].used) fatal("reply for an unknown call (slot %u)", slot);
  slot_state& s = slots_[slot];
  if (result.size() != s.size) fatal("reply of %zu bytes for a result of %zu bytes", result.size(), s.size);
  if (s.size != 0) std::memcpy(s.result, result.data(), s.size);
  s.done = true;
}

void engine::bulk_fragment(int src, handler_id target, std::uint32_t op, std::uint64_t total,
                           std::uint32_t args_len, std::uint64_t offset, payload bytes) {
  reassembly& r = in_bulk_[src];
  if (offset == 0 && !r.active && bytes.size() >= args_len && bytes.size() - args_len == total) {
    // The whole transfer in one packet (try_send_large): run the handler on it where it lies.
    const std::vector<std::byte> args(bytes.begin(), bytes.begin() + args_len);
    deliver_bulk(src, target, op, args, bytes.subspan(args_len));
    return;
  }
  if (offset == 0) {
    if (r.active) fatal("bulk transfer from node %d restarted before it ended", src);
    if (bytes.size() < args_len) fatal("corrupt bulk fragment from node %d", src);
    r.active = true;
    r.target = target;
    r.op = op;
    r.total = total;
    r.received = 0;
    r.args.assign(bytes.begin(), bytes.begin() + args_len);
    try {  // allocates, also when a fault handler's wait runs this handler
      r.data.reset(new std::byte[total == 0 ? 1 : total]);
    } catch (const std::bad_alloc&) {
      fatal("cannot allocate %llu bytes for a bulk transfer from node %d",
            static_cast<unsigned long long>(total), src);
    }
    bytes = bytes.subspan(args_len);
  } else if (!r.active || r.op != op || offset != r.received) {
    fatal("bulk fragment from node %d out of order", src);
  }
  if (r.received + bytes.size() > r.total) fatal("bulk transfer from node %d overruns its size", src);
  if (!bytes.empty()) std::memcpy(r.data.get() + r.received, bytes.data(), bytes.size());
  r.received += bytes.size();
  if (r.received < r.total) return;

  r.active = false;
  auto data = std::move(r.data);
  const auto args = std::move(r.args);
  deliver_bulk(src, r.target, op, args, payload(data.get(), r.total));
}

// A bulk transfer's handler on its data, counted like any message of that handler, then
// acknowledged (remote completion).
void engine::deliver_bulk(int src, handler_id target, std::uint32_t op, std::span<const std::byte> args,
                          payload data) {
  const record_header h{target, static_cast<std::uint32_t>(args.size()),
                        static_cast<std::uint32_t>(std::min<std::uint64_t>(data.size(), UINT32_MAX)), 0};
  run_handler(src, *lookup(src, target), h, args.data(), data);
  const std::uint64_t padded_op = op;  // argument buffers are read in whole words
  send(src, bulk_ack_handler, &padded_op, sizeof op, {}, 0);
}

void engine::bulk_acked(std::uint32_t op) {
  auto it = bulk_in_flight_.find(op);
  if (it == bulk_in_flight_.end()) fatal("acknowledgement for an unknown bulk transfer %u", op);
  it->second->remote.store(true, std::memory_order_release);
  bulk_in_flight_.erase(it);
}

}  // namespace squall::am
