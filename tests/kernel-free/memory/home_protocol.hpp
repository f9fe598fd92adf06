// SPDX-License-Identifier: BSD-3-Clause
// A toy write-invalidate coherence protocol across nodes, for tests and benchmarks: it shows
// fault handlers that send active messages and wait for the answers.
//
// Every block's home (the segment's home policy) keeps the master copy in its protocol view
// and a directory entry: the nodes holding a ReadOnly copy (sharers) or the one holding it
// ReadWrite (owner). Blocks start Invalid on every node, the home included; the home's own
// faults take the same path, as messages to itself.
//
//   requester                      home                              holders
//   fault: request(b, write) --->  busy with b? ---> refused ------> (requester asks again)
//                                  read:  owner?  ---> invalidate(b, keep ReadOnly) --->
//                                  write: sharers and owner ---> invalidate(b) ------->
//                                  <--- ack(b, the block's bytes if the holder owned it)
//          <--- grant(b, write, the block's bytes) when every ack is in
//   install(b, bytes, ReadOnly or ReadWrite)
//
// The home serialises the requests for one block (one transaction at a time; a request
// arriving meanwhile is refused and sent again), handlers never wait, and a fault handler
// waits for its answer with am::wait_until. Faults of one node are served one at a time
// (squall/memory.hpp), so a node has at most one request in flight. The path allocates
// nothing: the directory is sized up front, and with one request in flight per node the
// rings never fill (the tests check that no packet was queued).
#pragma once
#include <sched.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <squall/am.hpp>
#include <squall/memory.hpp>
#include <squall/runtime.hpp>

namespace toy_coherence {

using squall::memory::block_index;
using squall::memory::segment;
using squall::memory::tag;

// Counts of one node (written under the node lock; read them after a barrier). Atomic: the
// fault thread writes them and the program thread reads them.
struct protocol_counts {
  std::atomic<std::uint64_t> requests{0};       // sent by this node's faults (refused ones included)
  std::atomic<std::uint64_t> refusals{0};       // answers "busy, ask again" this node received
  std::atomic<std::uint64_t> invalidations{0};  // copies this node dropped or downgraded for its homes
  std::atomic<std::uint64_t> writebacks{0};     // of those, ReadWrite copies whose bytes went home
};

class home_protocol;

// Messages name a block by its global address, the same on every node.
inline std::uintptr_t address_of(segment s, block_index b) {
  return reinterpret_cast<std::uintptr_t>(s.address_of(b));
}

void on_request(squall::am::token& t, std::uintptr_t block, bool write);
void on_refused(squall::am::token& t, std::uintptr_t block);
void on_invalidate(squall::am::token& t, std::uintptr_t block, bool keep_read_only);
void on_ack(squall::am::token& t, std::uintptr_t block, squall::am::payload bytes);
void on_grant(squall::am::token& t, std::uintptr_t block, bool write, squall::am::payload bytes);

class home_protocol : public squall::memory::protocol {
 public:
  // For a segment of `blocks` blocks; construct it before the segment is allocated.
  explicit home_protocol(std::size_t blocks) : directory_(blocks) {
    if (squall::nodes() > 64) throw std::invalid_argument("home_protocol: at most 64 nodes");
  }

  void read_fault(segment s, block_index b) override { acquire(s, b, false); }
  void write_fault(segment s, block_index b) override { acquire(s, b, true); }

  const protocol_counts& counts() const { return counts_; }

  // Message handlers (see the diagram above).
  void request(segment s, block_index b, int from, bool write) {
    entry& d = directory_[b];
    const std::uintptr_t a = address_of(s, b);
    if (d.requester >= 0) {
      squall::am::send<on_refused>(from, a);
      return;
    }
    d.requester = from;
    d.write = write;
    d.acks_pending = 0;
    if (write) {
      for (int n = 0; n < squall::nodes(); ++n) {
        if (n != from && (d.sharers >> n & 1) != 0) invalidate_at(n, a, false, d);
      }
      if (d.owner >= 0 && d.owner != from) invalidate_at(d.owner, a, false, d);
    } else if (d.owner >= 0) {  // never the requester: an owner may read
      invalidate_at(d.owner, a, true, d);
    }
    if (d.acks_pending == 0) grant(s, b);
  }

  void invalidate(segment s, block_index b, int home, bool keep_read_only) {
    const bool owned = s.tag_of(b) == tag::read_write;
    // The tag first: once it is lowered no store of this node can still reach the block.
    s.set_tag(b, keep_read_only ? tag::read_only : tag::invalid);
    ++counts_.invalidations;
    if (owned) ++counts_.writebacks;
    const auto bytes = owned ? squall::am::payload(s.protocol_view(b)) : squall::am::payload{};
    squall::am::send<on_ack>(home, address_of(s, b), bytes);
  }

  void ack(segment s, block_index b, int from, squall::am::payload bytes) {
    entry& d = directory_[b];
    if (!bytes.empty() && from != squall::node()) std::memcpy(s.protocol_view(b).data(), bytes.data(), bytes.size());
    if (--d.acks_pending == 0) grant(s, b);
  }

  void granted(segment s, block_index b, bool write, squall::am::payload bytes) {
    s.install(b, bytes, write ? tag::read_write : tag::read_only);
    answered_ = true;
  }

  void refused() {
    ++counts_.refusals;
    answered_ = true;
  }

 private:
  struct entry {
    std::uint64_t sharers = 0;  // bit n: node n holds a ReadOnly copy
    int owner = -1;             // the node holding the block ReadWrite, or -1
    int requester = -1;         // the request being served, or -1
    bool write = false;
    int acks_pending = 0;
  };

  static bool allows(tag t, bool write) { return write ? t == tag::read_write : t != tag::invalid; }

  void invalidate_at(int holder, std::uintptr_t a, bool keep_read_only, entry& d) {
    squall::am::send<on_invalidate>(holder, a, keep_read_only);
    ++d.acks_pending;
  }

  void grant(segment s, block_index b) {
    entry& d = directory_[b];
    const int to = d.requester;
    if (d.write) {
      d.sharers = 0;
      d.owner = to;
    } else {
      if (d.owner >= 0) d.sharers |= std::uint64_t{1} << d.owner;  // downgraded to ReadOnly
      d.owner = -1;
      d.sharers |= std::uint64_t{1} << to;
    }
    d.requester = -1;
    squall::am::send<on_grant>(to, address_of(s, b), d.write, squall::am::payload(s.protocol_view(b)));
  }

  // Asks until the tag allows the access: a message handled at the end of the wait may
  // already have taken the block away again.
  void acquire(segment s, block_index b, bool write) {
    for (bool again = false; !allows(s.tag_of(b), write); again = true) {
      // Refused, or the block was taken away before the access ran: let the others run
      // before asking again (with more nodes than cores, asking at once made storms of
      // hundreds of requests per fault).
      if (again) sched_yield();
      answered_ = false;
      ++counts_.requests;
      squall::am::send<on_request>(s.home(b), address_of(s, b), write);
      squall::am::wait_until([this] { return answered_; });
    }
  }

  std::vector<entry> directory_;  // used for the blocks this node is home to
  protocol_counts counts_;
  bool answered_ = false;  // the one request of this node in flight was answered
};

// The protocol bound to the segment holding `block`, and the block's index.
struct located {
  segment s;
  block_index b;
  home_protocol* p;
};
inline located locate(std::uintptr_t block) {
  const segment s = squall::memory::segment_of(reinterpret_cast<const void*>(block));
  return {s, s.block_of(reinterpret_cast<const void*>(block)), static_cast<home_protocol*>(s.bound_protocol())};
}

inline void on_request(squall::am::token& t, std::uintptr_t block, bool write) {
  const auto [s, b, p] = locate(block);
  p->request(s, b, t.source(), write);
}
inline void on_refused(squall::am::token&, std::uintptr_t block) { locate(block).p->refused(); }
inline void on_invalidate(squall::am::token& t, std::uintptr_t block, bool keep_read_only) {
  const auto [s, b, p] = locate(block);
  p->invalidate(s, b, t.source(), keep_read_only);
}
inline void on_ack(squall::am::token& t, std::uintptr_t block, squall::am::payload bytes) {
  const auto [s, b, p] = locate(block);
  p->ack(s, b, t.source(), bytes);
}
inline void on_grant(squall::am::token&, std::uintptr_t block, bool write, squall::am::payload bytes) {
  const auto [s, b, p] = locate(block);
  p->granted(s, b, write, bytes);
}

}  // namespace toy_coherence
