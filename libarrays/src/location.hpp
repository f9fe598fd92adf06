// SPDX-License-Identifier: BSD-3-Clause
// Where an element is, as one node sees it: the paper's figure 5 as one small state machine.
// Each node keeps one location_entry per (array, key) it has heard of; every event that
// concerns the element goes through transition(), which is pure (no I/O, no allocation), so
// the runtime calls it inside active-message handlers and does what the outcome says.
// libarrays/PROTOCOL.md explains the protocol and why each message is delivered exactly once.
//
// States (H: this node is the element's home; N: it is not):
//   none       nothing known here. N sends messages to the home; H holds them (buffering).
//              At H, epoch > 0 is a tombstone: the last epoch of a deleted element (or
//              the array's epoch floor, for an entry made after tombstones were forgotten).
//   local      the element lives here.
//   remote     it is (H: exactly) or was last seen (N: a cache) on `node`, at `epoch`.
//   arriving   a migration here is announced; messages are held until it lands.
//   buffering  H only: messages held for an element that does not exist yet.
// An epoch names one stay of the element on one node: the home issues a new element a
// number past any earlier one at that index, and each migration adds one. Location news
// (routing_update) is taken only when newer, so no entry ever goes back in time.
//
// Transitions (e: the entry's epoch; ε, n: the event's; '=' the entry unchanged; "err" an
// error outcome, as is any condition not met; +inform: the outcome asks to tell the home):
//
//  event \ state      none                   local                 remote(m,e)              arriving(e)          buffering (H)
//  created_here(ε)    H local(e+1)           err exists            H = buffer (held)        err migrating here   local(e+1) flush
//                     N local(ε) if ε>e                            N local(ε) if ε>e
//  created_at(n) H    remote(n,e+1)          err exists            = buffer (held)          err exists           remote(n,e+1) flush
//  message_arrived    H buffering buffer     deliver[_and_update]  = forward                = buffer             = buffer
//                     N = forward_home
//  message_may_create H local(e+1)           deliver[_and_update]  = forward                = buffer             local(e+1)
//                       create_on_demand                                                                         create_on_demand
//                     N = forward_home
//  migrated_away(n)   err                    remote(n,e+1)         err                      err                  err
//  migration_         H err                  err                   arriving(ε) if ε>e       err                  err
//    announced(ε)     N arriving(ε) if ε>e
//  migration_         H err                  err                   local(ε) if ε>e          local(ε) if ε=e      err
//    landed(ε)        N local(ε) if ε>e                            +inform at N             flush, +inform at N
//                       +inform
//  routing_           ε>e: H err,            ε>e err               ε>e remote(n,ε)          ε≥e err              ε>e err
//    update(n,ε)      N remote(n,ε)          else ignore           else ignore              else ignore          else ignore
//                     else ignore
//  deleted_here       err                    none(e), +inform at N err                      err                  err
//  deleted_at(n,ε) H  err                    err                   none(e) flush            err                  err
//                                                                  if (n,ε)=(m,e)
//  cache_expired      H = record;  N none(0) ignore                H ignore; N none(0)      ignore               ignore
//
// cache_expired's record means "may be forgotten": the runtime erases the entry. At the home
// that is its record of no element (a tombstone, or an entry made by a lookup), and the
// runtime then starts the index's next entry at the array's epoch floor, the largest epoch it
// has forgotten, so every later element at the index is newer than anything a node remembers.
//
// created_at and deleted_at are home-only events: at N they are errors; so is any event while
// an N entry is in buffering (N never buffers). An insertion that reaches the home while it
// still records the element elsewhere is held, not refused: that element's deletion may be on
// its way on another channel, and deleted_at flushes it. (A true duplicate stays held; the
// runtime reports what is held at quiescence.) Every pair is pinned by
// tests/arrays/location_test.cpp, and the protocol is run on a model in location_sim_test.cpp.
#pragma once
#include <cstdint>

namespace squall::arrays {

enum class location_state : std::uint8_t { none, local, remote, arriving, buffering };

struct location_entry {
  location_state state = location_state::none;
  bool home = false;        // this node is the element's home (fixed for the key)
  int node = -1;            // remote: where the element is or was last seen; otherwise -1
  std::uint32_t epoch = 0;  // the newest epoch this node knows of the element

  friend bool operator==(const location_entry&, const location_entry&) = default;
};

enum class event_kind : std::uint8_t {
  created_here,         // the element was constructed on this node (N: with the home's epoch)
  created_at,           // H: the program inserts the element on node `node` (the home sends
                        // the creation there, with the outcome's epoch, before any flush)
  message_arrived,      // a message for the element is here (sent from here, or received)
  message_may_create,   // the same, for an entry method that may create the element on demand
  migrated_away,        // the element left this node for `node`
  migration_announced,  // the element will land here with `epoch`
  migration_landed,     // the element landed here with `epoch`
  routing_update,       // news: the element is on `node` at `epoch` (to the home, or to a sender)
  deleted_here,         // the element was deleted on this node
  deleted_at,           // H: the element was deleted on `node` at `epoch`
  cache_expired,        // the runtime may forget the entry (only where no message is in flight)
};
inline constexpr int event_kinds = 11;

struct event {
  event_kind kind;
  int node = -1;
  std::uint32_t epoch = 0;
  bool forwarded = false;  // messages: it was forwarded on its way from another node's sender
};

enum class action : std::uint8_t {
  record,              // take the new entry; nothing else to do
  ignore,              // stale or redundant news: the entry is unchanged
  deliver,             // run the entry method on the local element
  deliver_and_update,  // deliver, and send the message's sender routing_update(here, epoch)
  forward,             // send the message on to the entry's node
  forward_home,        // send the message to the element's home
  buffer,              // hold the message, or the insertion, in this entry's queue
  flush,               // pass what is held through transition() again, in arrival order
  create_on_demand,    // construct the element here (epoch: the entry's), flush, then deliver
  error,               // the event is impossible in this state: a runtime bug or a misuse
};

struct outcome {
  location_entry entry;  // the entry after the event; the input's on ignore and error
  action act = action::record;
  // Tell the home: routing_update(here, entry.epoch) after a landing, deleted_at(here, epoch)
  // after a deletion. Never set at the home itself.
  bool inform_home = false;
  const char* why = nullptr;  // error: what was wrong, for the message the runtime reports
};

outcome transition(const location_entry& entry, const event& ev);

const char* name(location_state s);
const char* name(event_kind k);
const char* name(action a);

}  // namespace squall::arrays
