// SPDX-License-Identifier: BSD-3-Clause
#include "transport/shm/shm_transport.hpp"

#include <cstring>

#include "common/futex.hpp"
#include "common/poke.hpp"
#include "common/process_fence.hpp"
#include "transport/quiet_sends.hpp"
#include "stats/counters.hpp"

namespace squall::shm {
namespace {
const int doorbells_rung = stats::counter_slot("shm.doorbells_rung");
const int futex_wakes = stats::counter_slot("shm.futex_wakes");
const int nudges = stats::counter_slot("shm.nudges");  // doorbells rung for a late reply (nudge_peers)
const int pokes = stats::counter_slot("shm.pokes");  // peers poked for packets still not taken (poke_stalled_peers)
const int pokes_spared = stats::counter_slot("shm.pokes_spared");  // not sent: the peer's would not yield
const int ring_full = stats::counter_slot("shm.ring_full_retries");  // sends refused for want of room
const int packets_sent = stats::counter_slot("shm.packets_sent");
const int bytes_sent = stats::counter_slot("shm.bytes_sent");
const int mailbox_packets = stats::counter_slot("shm.mailbox_packets");  // of packets_sent

void count_sent(std::size_t bytes) {
  stats::bump(stats::counter_at(packets_sent));
  stats::bump(stats::counter_at(bytes_sent), bytes);
}
}  // namespace

shm_transport::shm_transport(const job_area& job, int me) : job_(job), me_(me) {
  const int n = job.nodes();
  out_.resize(static_cast<std::size_t>(n));
  in_.resize(static_cast<std::size_t>(n));
  quiet_ = std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(n));
  mail_ = std::make_unique<mailbox[]>(static_cast<std::size_t>(n));
  peeked_mail_.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (!job.on_this_host(i)) continue;  // reached over TCP: no ring
    out_[i] = ring_producer(job.ring(me, i), job.ring_bytes());
    in_[i] = ring_consumer(job.ring(i, me), job.ring_bytes());
    if (i != me) mail_[i].attach(job.mailbox_line(me, i), me < i ? 0 : 1);
    local_.push_back(i);
  }
}

bool shm_transport::try_send(int dest, std::span<const std::byte> head,
                             std::span<const std::byte> body) {
  if (try_send_mail(dest, head, body)) return true;
  if (!out_[dest].try_push(head, body)) {
    stats::bump(stats::counter_at(ring_full));
    return false;
  }
  count_sent(head.size() + body.size());
  ring_doorbell(dest);
  return true;
}

void shm_transport::mail_sent(int dest, std::size_t bytes) {
  ring_doorbell(dest);
  count_sent(bytes);
  stats::bump(stats::counter_at(mailbox_packets));
}

void shm_transport::set_mailbox_tuning(int quiet_polls, int most_quiet_polls, bool demote) {
  for (const int i : local_) {
    mail_[i].set_quiet_polls(quiet_polls, most_quiet_polls);
    mail_[i].set_demote(demote);
  }
}

bool shm_transport::try_send_written(int dest, std::span<const std::byte> head, std::size_t body_size,
                                     body_writer write) {
  std::byte* out = out_[dest].try_reserve(head.size() + body_size);
  if (out == nullptr) {
    stats::bump(stats::counter_at(ring_full));
    return false;
  }
  std::memcpy(out, head.data(), head.size());
  write(out + head.size());
  out_[dest].commit();
  count_sent(head.size() + body_size);
  ring_doorbell(dest);
  return true;
}

std::span<const std::byte> shm_transport::peek(int src) {
  // The ring's header first: a ring packet sent after a mailbox packet is then never seen
  // without that mailbox packet (mailbox.hpp).
  ring_consumer& ring = in_[src];
  const std::uint64_t header = ring.header();
  mailbox& mail = mail_[src];
  const std::uint64_t word = mail.incoming();
  if (word != 0 && mailbox::position_of(word) == static_cast<std::uint32_t>(ring.position())) {
    peeked_mail_[src] = true;
    return take_from_mailbox(src, word);
  }
  return ring.take(header);
}

void shm_transport::release(int src) {
  if (peeked_mail_[src]) {
    peeked_mail_[src] = false;  // taken (copied out) in peek
    return;
  }
  if (in_[src].release()) ring_doorbell(src);
}

bool shm_transport::any_incoming() {
  for (const int i : local_) {
    if (!in_[i].empty() || mail_[i].has_packet()) return true;
  }
  return false;
}

void shm_transport::nudge_peers() {
  for (const int i : local_) {
    if (i == me_) continue;
    node_control& c = job_.control(i);
    if (c.lingering.load(std::memory_order_seq_cst) == 0) continue;  // polling, or rung at the send
    if (quiet_[i].load(std::memory_order_relaxed)) continue;  // handled at its next wait (am::quiet_sends)
    if (!out_[i].unread() && out_[i].mail_taken() == mail_[i].sent()) continue;
    c.doorbell.fetch_add(1, std::memory_order_seq_cst);
    stats::bump(stats::counter_at(nudges));
    if (c.sleepers.load(std::memory_order_seq_cst) != 0) {
      futex_wake_all(&c.doorbell);
      stats::counter_at(futex_wakes).fetch_add(1, std::memory_order_relaxed);
    }
  }
}

void shm_transport::poke_stalled_peers() {
  for (const int i : local_) {
    if (i == me_ || quiet_[i].load(std::memory_order_relaxed)) continue;
    if (!out_[i].unread() && out_[i].mail_taken() == mail_[i].sent()) continue;
    const node_control& c = job_.control(i);
    if (now_ns() < c.pokes_unyielded_until_ns.load(std::memory_order_relaxed)) {
      stats::bump(stats::counter_at(pokes_spared));  // its last poke's yield went to another program
      continue;
    }
    const pid_t pid = c.pid.load(std::memory_order_relaxed);
    if (pid <= 0 || !poke::running(pid)) continue;  // asleep: its processor is free
    poke::send(pid);
    stats::bump(stats::counter_at(pokes));
  }
}

void shm_transport::ring_doorbell(int node) {
  node_control& c = job_.control(node);
  const bool quiet = transport_detail::sending_quietly;
  // Only senders, under the node lock, ring a peer (a network I/O thread rings this node
  // itself, without it); the relaxed atomic keeps the two kinds of caller apart all the same.
  if (node != me_ && quiet_[node].load(std::memory_order_relaxed) != quiet) {
    quiet_[node].store(quiet, std::memory_order_relaxed);
  }
  // Pairs with the receiver's "awake--, heavy fence, look at the rings" before it sleeps.
  process_fence::light(c.light_fences.load(std::memory_order_relaxed) != 0);
  if (c.awake.load(std::memory_order_relaxed) != 0) return;
  c.doorbell.fetch_add(1, std::memory_order_seq_cst);
  stats::counter_at(doorbells_rung).fetch_add(1, std::memory_order_relaxed);
  if (c.sleepers.load(std::memory_order_seq_cst) != 0) {
    const std::uint32_t wakes = doorbell_wakes(c) & (quiet ? program_waiter : ~0u);
    if (wakes == 0) return;  // quiet, and no program thread asleep in a wait
    futex_wake_class(&c.doorbell, wakes);
    stats::counter_at(futex_wakes).fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace squall::shm
