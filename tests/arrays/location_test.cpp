// SPDX-License-Identifier: BSD-3-Clause
// Every transition of the element location state machine (libarrays/src/location.hpp), one
// table row each: every (state, home or not, event) must appear at least once, and rows
// cover the epoch cases (older, same, newer) where the answer depends on them.
#include <gtest/gtest.h>

#include <set>
#include <tuple>
#include <vector>

#include "location.hpp"

namespace {

using namespace squall::arrays;
using S = location_state;
using K = event_kind;
using A = action;

constexpr bool H = true;   // this node is the element's home
constexpr bool N = false;  // it is not

location_entry at(S s, bool home, std::uint32_t epoch = 3, int node = -1) { return {s, home, node, epoch}; }
location_entry remote(bool home, int node = 5, std::uint32_t epoch = 3) { return {S::remote, home, node, epoch}; }

struct row {
  location_entry before;
  event ev;
  location_entry after;  // ignored for error rows: the entry must come back unchanged
  A act;
  bool inform_home = false;
};

// The entries below: epoch 3 unless named, remote entries on node 5; events name node 7.
row err(location_entry e, event ev) { return {e, ev, e, A::error}; }
row same(location_entry e, event ev, A a) { return {e, ev, e, a}; }

event ev(K k, std::uint32_t epoch = 0, int node = 7) { return {k, node, epoch}; }
event message(K k, bool forwarded) { return {k, -1, 0, forwarded}; }

const std::vector<row> table = {
    // created_here: the home issues epoch e+1; elsewhere the epoch comes from the home.
    {at(S::none, H, 0), ev(K::created_here), at(S::local, H, 1), A::record},
    {at(S::none, H, 3), ev(K::created_here), at(S::local, H, 4), A::record},
    {at(S::none, N, 0), ev(K::created_here, 4), at(S::local, N, 4), A::record},
    err(at(S::none, N, 3), ev(K::created_here, 3)),
    err(at(S::local, H), ev(K::created_here)),
    err(at(S::local, N), ev(K::created_here, 4)),
    same(remote(H), ev(K::created_here), A::buffer),  // until the deletion elsewhere arrives
    {remote(N), ev(K::created_here, 4), at(S::local, N, 4), A::record},
    err(remote(N), ev(K::created_here, 3)),
    err(at(S::arriving, H), ev(K::created_here)),
    err(at(S::arriving, N), ev(K::created_here, 4)),
    {at(S::buffering, H, 0), ev(K::created_here), at(S::local, H, 1), A::flush},
    {at(S::buffering, H, 3), ev(K::created_here), at(S::local, H, 4), A::flush},
    err(at(S::buffering, N, 0), ev(K::created_here, 4)),

    // created_at: home only.
    {at(S::none, H, 0), ev(K::created_at), remote(H, 7, 1), A::record},
    {at(S::none, H, 3), ev(K::created_at), remote(H, 7, 4), A::record},
    err(at(S::none, N, 0), ev(K::created_at)),
    err(at(S::local, H), ev(K::created_at)),
    err(at(S::local, N), ev(K::created_at)),
    same(remote(H), ev(K::created_at), A::buffer),
    err(remote(N), ev(K::created_at)),
    err(at(S::arriving, H), ev(K::created_at)),
    err(at(S::arriving, N), ev(K::created_at)),
    {at(S::buffering, H, 0), ev(K::created_at), remote(H, 7, 1), A::flush},
    err(at(S::buffering, N, 0), ev(K::created_at)),

    // message_arrived
    {at(S::none, H, 0), message(K::message_arrived, false), at(S::buffering, H, 0), A::buffer},
    {at(S::none, H, 3), message(K::message_arrived, true), at(S::buffering, H, 3), A::buffer},
    same(at(S::none, N, 0), message(K::message_arrived, false), A::forward_home),
    same(at(S::none, N, 3), message(K::message_arrived, true), A::forward_home),
    same(at(S::local, H), message(K::message_arrived, false), A::deliver),
    same(at(S::local, H), message(K::message_arrived, true), A::deliver_and_update),
    same(at(S::local, N), message(K::message_arrived, false), A::deliver),
    same(at(S::local, N), message(K::message_arrived, true), A::deliver_and_update),
    same(remote(H), message(K::message_arrived, false), A::forward),
    same(remote(N), message(K::message_arrived, true), A::forward),
    same(at(S::arriving, H), message(K::message_arrived, false), A::buffer),
    same(at(S::arriving, N), message(K::message_arrived, true), A::buffer),
    same(at(S::buffering, H, 0), message(K::message_arrived, false), A::buffer),
    err(at(S::buffering, N, 0), message(K::message_arrived, false)),

    // message_may_create: only the home creates.
    {at(S::none, H, 0), message(K::message_may_create, false), at(S::local, H, 1), A::create_on_demand},
    {at(S::none, H, 3), message(K::message_may_create, true), at(S::local, H, 4), A::create_on_demand},
    same(at(S::none, N, 0), message(K::message_may_create, false), A::forward_home),
    same(at(S::local, H), message(K::message_may_create, false), A::deliver),
    same(at(S::local, N), message(K::message_may_create, true), A::deliver_and_update),
    same(remote(H), message(K::message_may_create, false), A::forward),
    same(remote(N), message(K::message_may_create, false), A::forward),
    same(at(S::arriving, H), message(K::message_may_create, false), A::buffer),
    same(at(S::arriving, N), message(K::message_may_create, false), A::buffer),
    {at(S::buffering, H, 0), message(K::message_may_create, false), at(S::local, H, 1), A::create_on_demand},
    {at(S::buffering, H, 3), message(K::message_may_create, false), at(S::local, H, 4), A::create_on_demand},
    err(at(S::buffering, N, 0), message(K::message_may_create, false)),

    // migrated_away: the element leaves with epoch e+1; the entry points after it.
    err(at(S::none, H), ev(K::migrated_away)),
    err(at(S::none, N), ev(K::migrated_away)),
    {at(S::local, H), ev(K::migrated_away), remote(H, 7, 4), A::record},
    {at(S::local, N), ev(K::migrated_away), remote(N, 7, 4), A::record},
    err(remote(H), ev(K::migrated_away)),
    err(remote(N), ev(K::migrated_away)),
    err(at(S::arriving, H), ev(K::migrated_away)),
    err(at(S::arriving, N), ev(K::migrated_away)),
    err(at(S::buffering, H, 0), ev(K::migrated_away)),
    err(at(S::buffering, N, 0), ev(K::migrated_away)),

    // migration_announced(ε)
    err(at(S::none, H, 0), ev(K::migration_announced, 4)),
    {at(S::none, N, 0), ev(K::migration_announced, 4), at(S::arriving, N, 4), A::record},
    err(at(S::none, N, 3), ev(K::migration_announced, 3)),
    err(at(S::local, H), ev(K::migration_announced, 4)),
    err(at(S::local, N), ev(K::migration_announced, 4)),
    {remote(H), ev(K::migration_announced, 4), at(S::arriving, H, 4), A::record},
    err(remote(H), ev(K::migration_announced, 3)),
    {remote(N), ev(K::migration_announced, 4), at(S::arriving, N, 4), A::record},
    err(remote(N), ev(K::migration_announced, 2)),
    err(at(S::arriving, H), ev(K::migration_announced, 4)),
    err(at(S::arriving, N), ev(K::migration_announced, 4)),
    err(at(S::buffering, H, 0), ev(K::migration_announced, 4)),
    err(at(S::buffering, N, 0), ev(K::migration_announced, 4)),

    // migration_landed(ε): away from the home, the home is told.
    err(at(S::none, H, 0), ev(K::migration_landed, 4)),
    {at(S::none, N, 0), ev(K::migration_landed, 4), at(S::local, N, 4), A::record, true},
    err(at(S::none, N, 3), ev(K::migration_landed, 3)),
    err(at(S::local, H), ev(K::migration_landed, 4)),
    err(at(S::local, N), ev(K::migration_landed, 4)),
    {remote(H), ev(K::migration_landed, 4), at(S::local, H, 4), A::record},
    err(remote(H), ev(K::migration_landed, 3)),
    {remote(N), ev(K::migration_landed, 4), at(S::local, N, 4), A::record, true},
    err(remote(N), ev(K::migration_landed, 3)),
    {at(S::arriving, H), ev(K::migration_landed, 3), at(S::local, H, 3), A::flush},
    {at(S::arriving, N), ev(K::migration_landed, 3), at(S::local, N, 3), A::flush, true},
    err(at(S::arriving, N), ev(K::migration_landed, 4)),
    err(at(S::buffering, H, 0), ev(K::migration_landed, 4)),
    err(at(S::buffering, N, 0), ev(K::migration_landed, 4)),

    // routing_update(n, ε): taken only when newer.
    err(at(S::none, H, 0), ev(K::routing_update, 1)),
    same(at(S::none, H, 3), ev(K::routing_update, 2), A::ignore),
    same(at(S::none, H, 3), ev(K::routing_update, 3), A::ignore),
    {at(S::none, N, 0), ev(K::routing_update, 4), remote(N, 7, 4), A::record},
    same(at(S::none, N, 3), ev(K::routing_update, 3), A::ignore),
    same(at(S::local, H), ev(K::routing_update, 3), A::ignore),
    err(at(S::local, H), ev(K::routing_update, 4)),
    same(at(S::local, N), ev(K::routing_update, 2), A::ignore),
    err(at(S::local, N), ev(K::routing_update, 4)),
    {remote(H), ev(K::routing_update, 4), remote(H, 7, 4), A::record},
    same(remote(H), ev(K::routing_update, 3), A::ignore),
    {remote(N), ev(K::routing_update, 4), remote(N, 7, 4), A::record},
    same(remote(N), ev(K::routing_update, 2), A::ignore),
    same(at(S::arriving, H), ev(K::routing_update, 2), A::ignore),
    err(at(S::arriving, H), ev(K::routing_update, 4)),
    same(at(S::arriving, N), ev(K::routing_update, 2), A::ignore),
    err(at(S::arriving, N), ev(K::routing_update, 3)),
    err(at(S::buffering, H, 0), ev(K::routing_update, 1)),
    same(at(S::buffering, H, 3), ev(K::routing_update, 2), A::ignore),
    err(at(S::buffering, N, 0), ev(K::routing_update, 1)),

    // deleted_here: the epoch stays (at the home, a tombstone).
    err(at(S::none, H), ev(K::deleted_here)),
    err(at(S::none, N), ev(K::deleted_here)),
    {at(S::local, H), ev(K::deleted_here), at(S::none, H, 3), A::record},
    {at(S::local, N), ev(K::deleted_here), at(S::none, N, 3), A::record, true},
    err(remote(H), ev(K::deleted_here)),
    err(remote(N), ev(K::deleted_here)),
    err(at(S::arriving, H), ev(K::deleted_here)),
    err(at(S::arriving, N), ev(K::deleted_here)),
    err(at(S::buffering, H, 0), ev(K::deleted_here)),
    err(at(S::buffering, N, 0), ev(K::deleted_here)),

    // deleted_at(n, ε): home only, and only for the element as the home knows it.
    err(at(S::none, H), ev(K::deleted_at, 3, 5)),
    err(at(S::none, N), ev(K::deleted_at, 3, 5)),
    err(at(S::local, H), ev(K::deleted_at, 3, 5)),
    err(at(S::local, N), ev(K::deleted_at, 3, 5)),
    {remote(H), ev(K::deleted_at, 3, 5), at(S::none, H, 3), A::flush},  // insertions held for it
    err(remote(H), ev(K::deleted_at, 3, 6)),
    err(remote(H), ev(K::deleted_at, 2, 5)),
    err(remote(N), ev(K::deleted_at, 3, 5)),
    err(at(S::arriving, H), ev(K::deleted_at, 3, 5)),
    err(at(S::arriving, N), ev(K::deleted_at, 3, 5)),
    err(at(S::buffering, H, 0), ev(K::deleted_at, 3, 5)),
    err(at(S::buffering, N, 0), ev(K::deleted_at, 3, 5)),

    // cache_expired: what a node that is not the home merely remembers, and the home's record
    // of no element (the runtime keeps its epoch in the array's floor).
    same(at(S::none, H, 3), ev(K::cache_expired), A::record),
    {at(S::none, N, 3), ev(K::cache_expired), at(S::none, N, 0), A::record},
    same(at(S::local, H), ev(K::cache_expired), A::ignore),
    same(at(S::local, N), ev(K::cache_expired), A::ignore),
    same(remote(H), ev(K::cache_expired), A::ignore),
    {remote(N), ev(K::cache_expired), at(S::none, N, 0), A::record},
    same(at(S::arriving, H), ev(K::cache_expired), A::ignore),
    same(at(S::arriving, N), ev(K::cache_expired), A::ignore),
    same(at(S::buffering, H, 0), ev(K::cache_expired), A::ignore),
    err(at(S::buffering, N, 0), ev(K::cache_expired)),
};

TEST(Location, EveryTransitionIsInTheTable) {
  std::set<std::tuple<S, bool, K>> seen;
  for (const row& r : table) seen.insert({r.before.state, r.before.home, r.ev.kind});
  const S states[] = {S::none, S::local, S::remote, S::arriving, S::buffering};
  for (S s : states)
    for (bool home : {true, false})
      for (int k = 0; k < event_kinds; ++k)
        EXPECT_TRUE(seen.count({s, home, static_cast<K>(k)}))
            << "no row for " << name(s) << (home ? " at the home" : " away from the home") << " on "
            << name(static_cast<K>(k));
  EXPECT_EQ(seen.size(), 5u * 2u * event_kinds);
}

TEST(Location, EveryRowHolds) {
  for (const row& r : table) {
    outcome o = transition(r.before, r.ev);
    SCOPED_TRACE(testing::Message() << name(r.before.state) << (r.before.home ? " (home)" : "") << " epoch "
                                    << r.before.epoch << " on " << name(r.ev.kind) << " epoch " << r.ev.epoch);
    EXPECT_EQ(name(o.act), name(r.act));
    EXPECT_EQ(o.inform_home, r.inform_home);
    EXPECT_EQ(o.why != nullptr, r.act == A::error);
    if (r.act == A::error || r.act == A::ignore) {
      EXPECT_EQ(o.entry, r.before);
    } else {
      EXPECT_EQ(name(o.entry.state), name(r.after.state));
      EXPECT_EQ(o.entry, r.after) << "node " << o.entry.node << " epoch " << o.entry.epoch;
    }
  }
}

// The home is never told anything by itself, whatever the event.
TEST(Location, TheHomeNeverInformsItself) {
  for (const row& r : table) {
    if (r.before.home) {
      EXPECT_FALSE(transition(r.before, r.ev).inform_home) << name(r.ev.kind);
    }
  }
}

}  // namespace
