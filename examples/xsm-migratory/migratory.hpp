// SPDX-License-Identifier: BSD-3-Clause
// A migratory protocol, written outside libxsm on its public interface (the walkthrough in
// libxsm/README.md builds it step by step). A block lives on one node at a time, with read
// and write permission: any access elsewhere moves it there, so data that is read and then
// written by one node at a time (a task record, a particle handed between workers) costs one
// miss per move, where stache pays a read miss and then an upgrade.
//
// The home of each block keeps who holds it. A miss asks the home; the home recalls the block
// from its holder (whose bytes come back with the answer) and grants it, bytes included, to
// the node that asked. Requests for a block in motion wait at the home in arrival order.
#pragma once
#include <cstdint>

#include <squall/am.hpp>
#include <squall/runtime.hpp>
#include <squall/xsm/protocol.hpp>

namespace migratory_example {

using namespace squall::xsm;

class migratory final : public protocol {
 public:
  std::string_view name() const override { return "migratory"; }

  // Step 1: the state. Every block is at its home to begin with (owner -1: nobody holds it).
  void attach(block_index first, block_index end, std::size_t) override {
    homes_ = home_directory(first, end, squall::nodes());
  }
  void detach() override { hold_.quiesce(); }
  // At a synchronisation point the program is done with the block it holds (step 8).
  void before_barrier() override { hold_.end(); }
  void after_acquire() override { hold_.end(); }
  void before_release() override { hold_.end(); }

  // Step 2: the fault handlers. Reads and writes alike take the block with write permission.
  void read_fault(segment s, block_index b) override { fetch(s, b); }
  void write_fault(segment s, block_index b) override { fetch(s, b); }

  // Step 3: the home. A request for an idle block starts a move; one for a moving block waits.
  void on_request(segment s, block_index b, int from) {
    requests_served.add();
    if (homes_.busy(b)) {
      homes_.defer(b, from, true);
      return;
    }
    start_move(s, b, from);
  }

  // Step 4: the holder gives the block up, sending its bytes home with the answer; if it
  // holds the block (step 8), when the hold ends.
  void on_recall(segment s, block_index b, int home) {
    if (hold_.defer(s, b, home)) return;
    give_up(s, b, home);
  }
  void give_up(segment s, block_index b, int home) {
    s.set_tag(b, tag::invalid);  // first: no store of this node reaches it any more
    recalls_answered.add();
    send_block<&migratory::on_returned>(home, s, b, true);
  }

  // Step 5: the home has the bytes back (already in its protocol view): grant the block.
  void on_returned(segment s, block_index b, int, block_part bytes) {
    bytes.store(s, b);
    if (homes_.answer(b)) grant(s, b);
  }

  // Step 6: the node that asked installs the block and its fault handler returns.
  void on_grant(segment s, block_index b, int, block_part bytes) {
    bytes.install(s, b, tag::read_write);
    granted_ = true;
    hold_.granted(s, b);
  }

  protocol_counter misses{"migratory.misses"};
  protocol_counter moves{"migratory.moves"};  // grants sent by this home to another node
  protocol_counter requests_served{"migratory.requests_served"};
  protocol_counter recalls_answered{"migratory.recalls_answered"};

 private:
  void fetch(segment s, block_index b) {
    hold_.end();  // this node faults again: the access its last grant was for has run
    // Another thread's synchronisation call may end the hold before the access runs: ask again.
    while (s.tag_of(b) != tag::read_write) {
      misses.add();
      granted_ = false;
      send<&migratory::on_request>(s.home(b), s, b);
      squall::am::wait_until([this] { return granted_; });
    }
    hold_.access_runs();  // held until the access has had hold_ns to run
  }

  void start_move(segment s, block_index b, int to) {
    homes_.start(b, to, true);
    const int holder = homes_.owner(b);
    const int me = squall::node();
    if (holder == me) {
      if (hold_.defer(s, b, me)) return;  // the home's own access first (step 8)
      s.set_tag(b, tag::invalid);  // the home's own copy: its protocol view is current
    } else if (holder >= 0) {
      homes_.expect_answer(b);
      send<&migratory::on_recall>(holder, s, b);
      return;  // granted when the bytes come back
    }
    grant(s, b);
  }

  void grant(segment s, block_index b) {
    const int to = homes_.current(b).node;
    homes_.set_owner(b, to);
    homes_.finish(b);
    if (to == squall::node()) {
      s.set_tag(b, tag::read_write);  // the home itself: its protocol view holds the bytes
      granted_ = true;
      hold_.granted(s, b);
    } else {
      moves.add();
      send_block<&migratory::on_grant>(to, s, b, true);
    }
    if (const auto next = homes_.next_waiting(b)) start_move(s, b, next->node);
  }

  // Step 8: the hold. A node keeps the block it was granted last until its access has run
  // (the kit's grant_hold): a recall that comes meanwhile is answered when the hold ends,
  // here. The home holds its own grants too: a move that would take the block from its own
  // access waits (asked_by is then the home itself), and goes on here.
  static void answer(void* self, segment s, block_index b, int asked_by) {
    auto& p = *static_cast<migratory*>(self);
    if (asked_by != squall::node()) return p.give_up(s, b, asked_by);
    s.set_tag(b, tag::invalid);
    p.grant(s, b);
  }
  home_directory homes_;
  bool granted_ = false;
  grant_hold hold_{answer, this};
};

}  // namespace migratory_example
