// SPDX-License-Identifier: BSD-3-Clause
// Holding a granted block, for a protocol that takes blocks back from the nodes it granted
// them to (a recall, an invalidation). Without a hold, the home sends the next waiting
// node's recall right behind a grant; the recall is often handled in the same poll as the
// grant, or by the progress thread, before the access the grant was for has run, and with
// several nodes asking the block can go round for ever with no access done (libtsm/
// PROTOCOL.md, "Holding a granted block"; libxsm/README.md, step 8).
//
// A grant_hold keeps the block this node was granted last. A recall for it is recorded
// (defer() says true) instead of answered, and answered through the protocol's `answer`
// function when the hold ends:
//
// - at end(): the protocol's next fault on this node (the access has run), or a
//   synchronisation point of the program (the program is done with the block);
// - at the latest hold_ns() after access_runs() (the fault handler returning), by a deferred
//   call (am::call_at) that the progress thread wakes for. It is only set up when a recall
//   is actually recorded, so a hold without contention costs nothing.
//
//   grant:           hold_.granted(s, b);                 (the grant's handler)
//   fault returns:   hold_.access_runs();                 (end of the fault handler)
//   recall:          if (hold_.defer(s, b, home)) return; (else answer it now)
//   next fault/sync: hold_.end();
//   detach():        hold_.quiesce();
//
// A home that grants its own node a block may hold it the same way: defer(s, b, node())
// when a move would take it from its own access, and continue the move in `answer`.
//
// Every call but quiesce() is made under the node lock, or takes it (end() and access_runs()
// may be called from a fault handler, a message handler or a synchronisation hook). `answer`
// runs under the node lock, like a message handler: it may send, not wait.
#pragma once
#include <cstdint>

#include <squall/memory.hpp>

namespace squall::tsm {

class grant_hold {
 public:
  // answer(owner, s, b, asked_by): give block b of s up to `asked_by`, as for a recall that
  // came now.
  using answer_fn = void (*)(void* owner, memory::segment s, memory::block_index b, int asked_by);

  grant_hold(answer_fn answer, void* owner) : answer_(answer), owner_(owner) {}
  grant_hold(const grant_hold&) = delete;
  grant_hold& operator=(const grant_hold&) = delete;

  // Block b of s was granted to this node: held from now, until hold_ns() after access_runs().
  // A hold of another block ends first (its recorded recall, if any, is answered).
  void granted(memory::segment s, memory::block_index b);
  // The fault handler returns: the access the grant was for runs now, and the clock starts.
  void access_runs();
  // A recall of block b of s from `asked_by`: true if the block is held, the recall recorded
  // for the hold's end; false if it is not held (answer it now). One recall per hold: a home
  // asks once (a second is a protocol error, and throws usage_error).
  bool defer(memory::segment s, memory::block_index b, int asked_by);
  // Ends the hold now; a recorded recall is answered.
  void end();
  // Collective use ends: waits until no deferred call is pending (the protocol's detach(); the
  // object must not go while one is).
  void quiesce();

  // How long a block is held after its access began: SQUALL_TSM_HOLD_US (default 50 µs), as
  // stache holds its blocks.
  static std::int64_t hold_ns();

 private:
  void end_locked();
  void call_at_hold_end();
  static void on_deadline(void* self);

  answer_fn answer_;
  void* owner_;
  memory::segment s_{};
  memory::block_index b_ = 0;
  bool holding_ = false;
  int asked_by_ = -1;       // the recall recorded, or -1
  std::int64_t since_ = -1;  // when the access began; -1: not yet
  bool call_pending_ = false;
};

}  // namespace squall::tsm
