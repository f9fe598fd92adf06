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
#include <utility>

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
  void detach() override {
    squall::am::wait_until([this] { return !call_pending_; });
  }

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
  // holds the block (step 7), when the hold ends.
  void on_recall(segment s, block_index b, int home) {
    if (hold_.keeps(s, b)) {
      hold_.recalled_by = home;
      end_hold_in_time();
      return;
    }
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
    hold_ = {s, b};
  }

  protocol_counter misses{"migratory.misses"};
  protocol_counter moves{"migratory.moves"};  // grants sent by this home to another node
  protocol_counter requests_served{"migratory.requests_served"};
  protocol_counter recalls_answered{"migratory.recalls_answered"};

 private:
  void fetch(segment s, block_index b) {
    end_hold();  // this node faults again: the access its last grant was for has run
    // The home does not hold its own blocks: a request handled at the end of the wait may
    // take its grant away again. Ask again.
    while (s.tag_of(b) != tag::read_write) {
      misses.add();
      granted_ = false;
      send<&migratory::on_request>(s.home(b), s, b);
      squall::am::wait_until([this] { return granted_; });
    }
    hold_.since = squall::am::clock_ns();  // the access is about to run
    end_hold_in_time();
  }

  void start_move(segment s, block_index b, int to) {
    homes_.start(b, to, true);
    const int holder = homes_.owner(b);
    const int me = squall::node();
    if (holder == me) {
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
    } else {
      moves.add();
      send_block<&migratory::on_grant>(to, s, b, true);
    }
    if (const auto next = homes_.next_waiting(b)) start_move(s, b, next->node);
  }

  // Step 7: the hold. A recall sent right behind a grant (another node was waiting) was
  // often handled before the granted access ran, and with several nodes asking, the block
  // could go round for ever with no access done. So a node keeps the block it was granted
  // last until it faults again, or hold_ns after its fault handler returned: a recall that
  // comes meanwhile is answered then, by a deferred call (run under the node lock, like a
  // handler). detach() waits for a pending call, which must not outlive the object.
  static constexpr std::int64_t hold_ns = 50'000;
  struct hold {
    segment s;
    block_index b = 0;
    int recalled_by = -1;     // the home that asked for the block back, or -1
    std::int64_t since = -1;  // when the access was about to run; -1: not yet
    bool keeps(segment other, block_index block) const {
      return s == other && b == block && (since < 0 || squall::am::clock_ns() < due());
    }
    std::int64_t due() const { return since + hold_ns; }
  };
  void end_hold() {
    const hold h = std::exchange(hold_, hold{});
    if (h.recalled_by >= 0) give_up(h.s, h.b, h.recalled_by);
  }
  // A call at the hold's end, when a recall waits for it and the clock has started.
  void end_hold_in_time() {
    if (hold_.recalled_by < 0 || hold_.since < 0 || call_pending_) return;
    call_pending_ = true;
    squall::am::call_at(hold_.due(), [](void* self) { static_cast<migratory*>(self)->on_hold_timer(); }, this);
  }
  void on_hold_timer() {
    call_pending_ = false;
    if (hold_.since >= 0 && squall::am::clock_ns() >= hold_.due()) {
      end_hold();
    } else {
      end_hold_in_time();  // set for an earlier hold, since ended: this one ends later
    }
  }

  home_directory homes_;
  bool granted_ = false;
  hold hold_;
  bool call_pending_ = false;
};

}  // namespace migratory_example
