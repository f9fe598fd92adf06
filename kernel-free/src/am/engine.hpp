// SPDX-License-Identifier: BSD-3-Clause
// The active-message engine of one node: packs records into per-destination packets
// (aggregation), queues packets that find no room, streams bulk transfers in fragments,
// and runs the handlers of arrived packets. Every call requires the node lock.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <cstring>
#include <vector>

#include <squall/am.hpp>

#include "am/registry.hpp"
#include "am/stage.hpp"
#include "stats/counters.hpp"
#include "transport/shm/shm_transport.hpp"
#include "transport/transport.hpp"

namespace squall::am {

// On the wire each record is this header, the arguments and the payload, each part
// padded to 8 bytes; a packet is a sequence of records.
struct record_header {
  handler_id handler;
  std::uint32_t args_len;
  std::uint32_t payload_len;
  std::uint32_t reply_slot;  // 0 unless the sender waits for the handler's result
};
static_assert(sizeof(record_header) == 16);

// The runtime's handler that completes an am::call with its result (registry.hpp).
extern const handler_entry& reply_handler;

namespace detail {
struct bulk_state {
  std::atomic<bool> local{false};
  std::atomic<bool> remote{false};
};
}  // namespace detail

class engine {
 public:
  engine(transport& t, int me, int nodes);

  // Appends a message to dest's packet (`args` readable up to a multiple of 8 bytes).
  // Returns true when dest's queue of packets waiting for room is past the backlog limit.
  // A payload of direct_payload_bytes or more leaves at once as a packet of its own, copied
  // straight into the transport (one copy instead of two).
  bool send(int dest, const handler_entry& h, const void* args, std::size_t args_len, payload data,
            std::uint32_t reply_slot);
  // The same with the payload's `size` bytes written in place by `write` (it runs once,
  // before this returns).
  bool send_written(int dest, const handler_entry& h, const void* args, std::size_t args_len,
                    std::size_t size, body_writer write, std::uint32_t reply_slot);
  static constexpr std::size_t direct_payload_bytes = 2048;

  // The lock-free send of the thread that started the runtime, when messages are aggregated
  // (am/stage.hpp). The caller is that thread, outside handlers, without the node lock, with
  // a payload in private memory. `staged`: done. `flush_needed`: done, and the caller calls
  // flush_stage under the node lock. `no_room`: nothing done; the caller calls flush_stage
  // and tries again. `not_staged`: the caller sends through the locked path.
  enum class staging { staged, flush_needed, no_room, not_staged };
  staging stage_send(int dest, const handler_entry& h, const void* args, std::size_t args_len, payload data);
  // Under the node lock, by that thread: sends what dest's stage holds and empties it.
  // Returns true when dest's queue is past the backlog limit (as send does).
  bool flush_stage(int dest);
  static void claim_stage(bool mine) { stage_owner_ = mine; }  // the runtime's starting thread
  static bool stage_owner() { return stage_owner_; }
  std::shared_ptr<detail::bulk_state> bulk_send(int dest, const handler_entry& h, const void* args,
                                                std::size_t args_len, payload data);
  void flush(int dest);
  void flush_all();
  // Runs the handlers of arrived packets, then sends what they produced (the program's
  // own partly filled packets wait for the aggregation factor or a flush). Returns the
  // number of packets handled (0 when called inside a handler).
  std::size_t poll();
  // The same for a waiter: stops as soon as pred(ctx) holds after a packet (or tests it once
  // at the end), and says whether it held. pred is not asked again once it returned true.
  std::size_t poll_until(bool (*pred)(void*), void* ctx, bool& satisfied);
  // Pushes queued packets and bulk fragments into the transport as room allows.
  void push_queued();

  // The mailbox lane of small request/reply messages (kernel-free/TRANSPORTS.md), to the
  // peers the transport offers it for (transport::mailbox_lane: the nodes on this host). A
  // request's reply must be stored within a few tens of nanoseconds of the request being
  // seen, so these skip the general paths:
  // - whether a mailbox packet waits, as a spinning waiter asks it (without the node lock;
  //   quiet for a few polls after a send, transport/shm/mailbox.hpp);
  bool mail_waiting() const { return mail_ != nullptr && mail_->mail_waiting(); }
  // - whether anything waits, as a spinning waiter asks it (transport::worth_polling);
  bool worth_polling() { return mail_is_transport_ ? mail_->spin_incoming() : t_.worth_polling(); }
  // - handles the mailbox packets that wait (node lock held); true when pred held after one;
  bool poll_mail(bool (*pred)(void*), void* ctx);
  // - sends one small record (fits_mail) straight into dest's mailbox when aggregation is 1
  //   and nothing else waits to go to dest (node lock held); false, with nothing done,
  //   otherwise.
  bool send_mail(int dest, const handler_entry& h, const void* args, std::size_t args_len, payload data,
                 std::uint32_t reply_slot) {
    return mail_possible(dest, args_len, data.size()) && put_mail(dest, h, args, args_len, data, reply_slot);
  }
  // Whether a record of these sizes fits a mailbox packet.
  static constexpr bool fits_mail(std::size_t args_len, std::size_t payload_len) {
    return sizeof(record_header) + ((args_len + 7) & ~std::size_t{7}) + payload_len <= shm::mailbox::max_packet;
  }

  // Whether the last push of the queued packets sent none of them (the transport refused: a
  // full socket). A waiter then lets the transport wake it when there is room, rather than
  // retry at once (tcp_transport::write_pending rings the node).
  bool sends_stalled() const { return sends_stalled_.load(std::memory_order_relaxed); }
  bool has_unsent() const {
    return unsent_.load(std::memory_order_relaxed) != 0 ||
           staged_bytes_.load(std::memory_order_relaxed) != drained_bytes_.load(std::memory_order_relaxed);
  }
  // Called, under the node lock, by every poll that handled packets (the runtime wakes
  // the threads asleep in a wait whose condition those packets may have met).
  void on_handled(void (*fn)(void*), void* ctx) {
    on_handled_ = fn;
    on_handled_ctx_ = ctx;
  }
  // Advances whenever a poll handled something: a waiter spinning without the lock
  // watches it to learn that another thread ran handlers.
  std::uint64_t handled_epoch() const { return handled_epoch_.load(std::memory_order_acquire); }
  std::size_t queued_bytes(int dest) const { return out_[dest].queued_bytes; }

  // Deferred calls (am::call_at), under the node lock; poll() runs those that are due.
  void call_at(std::int64_t deadline_ns, void (*fn)(void*), void* ctx);
  // Runs fn(ctx) now, as a handler (am::run_locked, a due deferred call): it may send but
  // not wait, and what it sent leaves when it returns.
  void run_as_handler(void (*fn)(void*), void* ctx);
  // The earliest pending deadline, or INT64_MAX; read without the lock.
  std::int64_t next_deadline() const { return next_deadline_.load(std::memory_order_relaxed); }

  void set_aggregation(unsigned k) { aggregation_.store(k, std::memory_order_relaxed); }
  unsigned aggregation() const { return aggregation_.load(std::memory_order_relaxed); }
  std::size_t max_payload() const { return max_payload_; }

  // Messages of the program's own handlers sent and handled here (fence counts them).
  std::uint64_t user_sent() const {
    return user_sent_.load(std::memory_order_relaxed) + user_sent_staged_.load(std::memory_order_relaxed);
  }
  std::uint64_t user_handled() const { return user_handled_.load(std::memory_order_relaxed); }

  // Reply slots for am::call.
  std::uint32_t open_slot(void* result, std::size_t size);
  bool slot_done(std::uint32_t slot) const { return slots_[slot].done; }
  void close_slot(std::uint32_t slot);
  void complete_slot(std::uint32_t slot, payload result);

  // Bulk transfer protocol (called by its internal handlers).
  void bulk_fragment(int src, handler_id target, std::uint32_t op, std::uint64_t total,
                     std::uint32_t args_len, std::uint64_t offset, payload bytes);
  void bulk_acked(std::uint32_t op);
  void deliver_bulk(int src, handler_id target, std::uint32_t op, std::span<const std::byte> args, payload data);

  static bool in_handler() { return running_handler_; }
  // Inside the handler of a mailbox packet (dispatch_one: copied out before it ran), runs
  // fn(ctx) through `unlocked` (which lets the node lock go around it) as program code, not
  // as a handler, and returns true; false, with nothing run, in any other handler or outside
  // one (am::run_unlocked_in_handler).
  template <class Unlocked>
  bool run_outside_handler(void (*fn)(void*), void* ctx, Unlocked&& unlocked) {
    if (!running_handler_ || !copied_out_) return false;
    running_handler_ = false;
    copied_out_ = false;
    unlocked(fn, ctx);
    copied_out_ = true;
    running_handler_ = true;
    return true;
  }
  std::size_t max_packet() const { return max_packet_; }

 private:
  struct queued {
    std::vector<std::byte> packet;                // an aggregated packet, or
    std::shared_ptr<detail::bulk_state> bulk;     // a bulk transfer being streamed
    handler_id target = 0;
    std::uint32_t op = 0;
    std::vector<std::byte> args;
    const std::byte* data = nullptr;
    std::size_t size = 0, sent = 0;
    bool whole = false;  // went as one packet the transport reads from `data` (try_send_large)
  };
  struct outgoing {
    std::unique_ptr<std::byte[]> buffer;  // records of the packet being filled
    std::size_t used = 0;                 // bytes of it filled
    unsigned count = 0;
    std::deque<queued> queue;       // packets waiting for room, in order
    std::size_t queued_bytes = 0;
    bool by_handler = false;        // a handler wrote to it: poll() sends it when done
  };
  struct reassembly {
    bool active = false;
    handler_id target = 0;
    std::uint32_t op = 0;
    std::uint64_t total = 0, received = 0;
    std::vector<std::byte> args;
    std::unique_ptr<std::byte[]> data;
  };
  struct slot_state {
    void* result = nullptr;
    std::size_t size = 0;
    bool used = false, done = false;
  };

  bool push_bulk(int dest, queued& q);  // true when the last fragment is out
  // Moves what dest's stage published to the end of dest's packet (node lock held); every
  // locked append for dest does this first, which keeps the order of sends.
  void drain_stage(int dest);
  void send_buffer(int dest);  // sends dest's packet being filled, or queues it
  void take_staged(int dest, const stage::portion& staged);  // marks them taken, for has_unsent
  void count_received(const handler_entry& e, std::uint64_t messages, std::uint64_t bytes);
  // Writes a record's header and padded arguments at p; returns the bytes written.
  static std::size_t write_head(std::byte* p, const handler_entry& e, const void* args,
                                std::size_t args_len, std::size_t payload_len, std::uint32_t reply_slot);
  // Reserves a record in dest's packet, writes its head, returns where its payload goes;
  // finish_record then counts it and applies the aggregation factor.
  std::byte* append_record(int dest, const handler_entry& e, const void* args, std::size_t args_len,
                           std::size_t payload_len, std::uint32_t reply_slot);
  bool finish_record(int dest, const handler_entry& e, std::size_t bytes);
  void count_sent(const handler_entry& e, std::size_t bytes);
  static void count_packet_sent();
  static void count_packet_received();
  static body_writer copy_of(const payload& data) {
    return {[](void* d, std::byte* out) {
              const auto* p = static_cast<const payload*>(d);
              std::memcpy(out, p->data(), p->size());
            },
            const_cast<payload*>(&data)};
  }
  [[noreturn]] void payload_too_large(const handler_entry& e, std::size_t size) const;
  // send_mail's two halves: whether the record may go to dest's mailbox now (a lane, it
  // fits, no aggregation, nothing waiting for dest), and putting it there, false when the
  // other side holds the line's turn.
  bool mail_possible(int dest, std::size_t args_len, std::size_t payload_len) const;
  // The payload is written by write(where) straight into the mailbox line.
  template <class Write>
  bool put_mail(int dest, const handler_entry& e, const void* args, std::size_t args_len, std::size_t payload_len,
                Write&& write, std::uint32_t reply_slot);
  bool put_mail(int dest, const handler_entry& e, const void* args, std::size_t args_len, payload data,
                std::uint32_t reply_slot) {
    return put_mail(dest, e, args, args_len, data.size(), [&data](std::byte* p) {
      if (!data.empty()) std::memcpy(p, data.data(), data.size());
    }, reply_slot);
  }

  static inline thread_local bool running_handler_ = false;
  // The running handler's packet was copied out of the mailbox lane (dispatch_one): the
  // handler may let the node lock go (run_outside_handler).
  static inline thread_local bool copied_out_ = false;
  void dispatch_packet(int src, std::span<const std::byte> packet);
  // The same for a mailbox packet (at most 56 bytes), fastest for one record.
  void dispatch_one(int src, std::span<const std::byte> packet);
  const handler_entry* last_handler_ = nullptr;  // of the last dispatch_one (ids never change)
  [[noreturn]] static void handler_failed(const handler_entry& e, const std::exception& ex);
  void after_handling();  // what a poll does once it handled packets
  void flush_handler_sends();  // sends the packets handlers wrote to
  const handler_entry* lookup(int src, handler_id id);  // fatal if unknown
  void run_handler(int src, const handler_entry& e, const record_header& h, const std::byte* args,
                   payload data);

  transport& t_;
  // The shared-memory transport offering the mailbox lane (transport::mailbox_lane), or
  // nullptr: its mailboxes are read and written without a virtual call. By destination,
  // the lane to it or nullptr; the peers with a lane; whether the lane's transport is the
  // whole transport (every node on this host), so a spinning waiter need look nowhere else.
  shm::shm_transport* mail_ = nullptr;
  std::vector<shm::shm_transport*> lane_to_;
  std::vector<int> mail_peers_;
  bool mail_is_transport_ = false;
  int nodes_;
  std::size_t max_packet_, max_payload_, backlog_limit_;
  std::atomic<unsigned> aggregation_{1};
  std::vector<outgoing> out_;
  std::unique_ptr<stage[]> stages_;  // by destination
  static inline thread_local bool stage_owner_ = false;
  // Bytes staged (written by the stages' producer) and drained (by the node-lock holder):
  // unequal while a stage holds something, so has_unsent() sees staged records.
  std::atomic<std::uint64_t> staged_bytes_{0}, drained_bytes_{0};
  std::atomic<std::uint64_t> user_sent_staged_{0};  // written by the stages' producer only
  std::vector<int> poll_order_;  // sources, starting after this node (fairness)
  std::vector<reassembly> in_bulk_;
  std::map<std::uint32_t, std::shared_ptr<detail::bulk_state>> bulk_in_flight_;
  std::uint32_t next_bulk_op_ = 1;
  std::vector<slot_state> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::atomic<std::uint64_t> user_sent_{0}, user_handled_{0};
  // Destinations with a partly filled or queued packet. Changed only under the node lock,
  // read without it (has_unsent): a load and a store, not a locked read-modify-write, which
  // cost a fifth of a small send (two per message at aggregation 1).
  std::atomic<int> unsent_{0};
  std::atomic<bool> sends_stalled_{false};
  std::uint64_t pushed_ = 0;  // packets and fragments handed to the transport (node lock)
  void add_unsent(int d) { unsent_.store(unsent_.load(std::memory_order_relaxed) + d, std::memory_order_relaxed); }
  std::atomic<std::uint64_t> handled_epoch_{0};  // advances when a poll handled something
  void (*on_handled_)(void*) = nullptr;
  void* on_handled_ctx_ = nullptr;

  struct deferred_call {
    std::int64_t deadline = 0;
    void (*fn)(void*) = nullptr;  // nullptr: a free slot
    void* ctx = nullptr;
  };
  std::array<deferred_call, 16> calls_{};
  std::atomic<std::int64_t> next_deadline_{INT64_MAX};
  void run_due_calls();
};

extern engine* current_engine;  // this node's engine, for internal handlers

namespace detail {
inline std::size_t round8(std::size_t n) { return (n + 7) & ~std::size_t{7}; }
}  // namespace detail

inline std::size_t engine::write_head(std::byte* p, const handler_entry& e, const void* args,
                                      std::size_t args_len, std::size_t payload_len,
                                      std::uint32_t reply_slot) {
  const record_header h{e.id, static_cast<std::uint32_t>(args_len),
                        static_cast<std::uint32_t>(payload_len), reply_slot};
  std::memcpy(p, &h, sizeof h);
  // Whole words: arguments are small, and a call to memcpy would cost more than the copy.
  const std::size_t padded = detail::round8(args_len);
  const auto* a = static_cast<const std::byte*>(args);
  for (std::size_t i = 0; i < padded; i += 8) std::memcpy(p + sizeof h + i, a + i, 8);
  return sizeof h + padded;
}

inline std::byte* engine::append_record(int dest, const handler_entry& e, const void* args,
                                        std::size_t args_len, std::size_t payload_len,
                                        std::uint32_t reply_slot) {
  const std::size_t record = sizeof(record_header) + detail::round8(args_len) + detail::round8(payload_len);
  if (!stages_[dest].empty()) [[unlikely]] drain_stage(dest);
  outgoing& o = out_[dest];
  if (o.used + record > max_packet_) [[unlikely]] flush(dest);
  if (o.count == 0 && o.queue.empty()) add_unsent(1);
  std::byte* p = o.buffer.get() + o.used;
  o.used += record;
  return p + write_head(p, e, args, args_len, payload_len, reply_slot);
}

inline void engine::count_sent(const handler_entry& e, std::size_t bytes) {
  auto& hs = stats::handler_at(e.index);
  stats::bump(hs.sent);
  stats::bump(hs.sent_bytes, bytes);
  if (!e.internal) stats::bump(user_sent_);
}

inline bool engine::finish_record(int dest, const handler_entry& e, std::size_t bytes) {
  outgoing& o = out_[dest];
  ++o.count;
  if (running_handler_) o.by_handler = true;
  count_sent(e, bytes);
  if (o.count >= aggregation_.load(std::memory_order_relaxed)) flush(dest);
  return o.queued_bytes > backlog_limit_;
}

inline bool engine::send(int dest, const handler_entry& e, const void* args, std::size_t args_len,
                         payload data, std::uint32_t reply_slot) {
  if (data.size() >= direct_payload_bytes) [[unlikely]] {
    return send_written(dest, e, args, args_len, data.size(), copy_of(data), reply_slot);
  }
  // A packet of this one record (no aggregation, nothing waiting for dest) goes to the
  // transport straight from here: the reply of a request/reply exchange reaches the wire
  // sooner, and the counting comes after.
  if (aggregation_.load(std::memory_order_relaxed) == 1 && out_[dest].count == 0 && out_[dest].queue.empty() &&
      stages_[dest].empty()) {
    if (lane_to_[dest] != nullptr && fits_mail(args_len, data.size()) && put_mail(dest, e, args, args_len, data, reply_slot)) {
      return false;
    }
    alignas(8) std::byte head[sizeof(record_header) + detail::max_args_bytes];
    const std::size_t head_len = write_head(head, e, args, args_len, data.size(), reply_slot);
    if (t_.try_send(dest, std::span(head, head_len), data)) [[likely]] {
      count_packet_sent();
      count_sent(e, args_len + data.size());
      return false;
    }
  }
  std::byte* body = append_record(dest, e, args, args_len, data.size(), reply_slot);
  if (!data.empty()) std::memcpy(body, data.data(), data.size());
  return finish_record(dest, e, args_len + data.size());
}

inline engine::staging engine::stage_send(int dest, const handler_entry& e, const void* args,
                                          std::size_t args_len, payload data) {
  const unsigned factor = aggregation_.load(std::memory_order_relaxed);
  if (factor == 1 || data.size() >= direct_payload_bytes) return staging::not_staged;
  stage& s = stages_[dest];
  const std::size_t record = sizeof(record_header) + detail::round8(args_len) + detail::round8(data.size());
  std::byte* p = s.reserve(record);
  if (p == nullptr) return staging::no_room;
  std::byte* body = p + write_head(p, e, args, args_len, data.size(), 0);
  if (!data.empty()) std::memcpy(body, data.data(), data.size());
  s.publish(record);
  staged_bytes_.store(staged_bytes_.load(std::memory_order_relaxed) + record, std::memory_order_relaxed);
  auto& hs = stats::handler_at(e.index);
  stats::bump(hs.staged_sent);
  stats::bump(hs.staged_sent_bytes, args_len + data.size());
  if (!e.internal) stats::bump(user_sent_staged_);
  return s.waiting_records() >= factor ? staging::flush_needed : staging::staged;
}

inline bool engine::mail_possible(int dest, std::size_t args_len, std::size_t payload_len) const {
  return lane_to_[dest] != nullptr && fits_mail(args_len, payload_len) &&
         aggregation_.load(std::memory_order_relaxed) == 1 && out_[dest].count == 0 && out_[dest].queue.empty() &&
         stages_[dest].empty();
}

template <class Write>
bool engine::put_mail(int dest, const handler_entry& e, const void* args, std::size_t args_len, std::size_t payload_len,
                      Write&& write, std::uint32_t reply_slot) {
  alignas(8) std::byte head[shm::mailbox::max_packet];
  const std::size_t n = write_head(head, e, args, args_len, payload_len, reply_slot);
  if (!lane_to_[dest]->try_send_mail(dest, std::span(head, n), payload_len, write)) return false;
  count_packet_sent();
  count_sent(e, args_len + payload_len);
  return true;
}

inline void engine::dispatch_one(int src, std::span<const std::byte> packet) {
  record_header h;
  std::memcpy(&h, packet.data(), sizeof h);
  const std::byte* args = packet.data() + sizeof h;
  const std::byte* data = args + detail::round8(h.args_len);
  if (packet.size() < sizeof h || data + h.payload_len > packet.data() + packet.size()) {
    dispatch_packet(src, packet);  // reports the corruption
    return;
  }
  if (data + detail::round8(h.payload_len) < packet.data() + packet.size()) {
    dispatch_packet(src, packet);  // more records: an aggregated packet that fitted the mailbox
    return;
  }
  if (last_handler_ == nullptr || last_handler_->id != h.handler) last_handler_ = lookup(src, h.handler);
  const handler_entry& e = *last_handler_;
  token t(src);
  running_handler_ = true;
  copied_out_ = true;
  try {
    e.fn(t, e.ctx, args, h.args_len, payload(data, h.payload_len), h.reply_slot);
  } catch (const std::exception& ex) {
    handler_failed(e, ex);
  }
  copied_out_ = false;
  running_handler_ = false;
  count_received(e, 1, h.args_len + h.payload_len);
}

inline bool engine::poll_mail(bool (*pred)(void*), void* ctx) {
  if (running_handler_) return false;
  bool handled = false, satisfied = false;
  for (const int src : mail_peers_) {
    const auto packet = mail_->take_mail(src);
    if (packet.empty()) continue;
    dispatch_one(src, packet);
    count_packet_received();
    handled = true;
    if (pred(ctx)) {
      satisfied = true;
      break;
    }
  }
  if (handled) after_handling();
  return satisfied;
}

}  // namespace squall::am
