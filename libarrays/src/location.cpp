// SPDX-License-Identifier: BSD-3-Clause
// The element location state machine (location.hpp has the table this code follows).
#include "location.hpp"

namespace squall::arrays {

namespace {

using S = location_state;
using A = action;

outcome keep(const location_entry& e, A a) { return {e, a}; }
outcome fail(const location_entry& e, const char* why) { return {e, A::error, false, why}; }
outcome become(const location_entry& e, S s, int node, std::uint32_t epoch, A a, bool inform = false) {
  return {{s, e.home, node, epoch}, a, inform && !e.home};
}

outcome on_message(const location_entry& e, const event& ev, bool may_create) {
  switch (e.state) {
    case S::local: return keep(e, ev.forwarded ? A::deliver_and_update : A::deliver);
    case S::remote: return keep(e, A::forward);
    case S::arriving: return keep(e, A::buffer);
    case S::none:
      if (!e.home) return keep(e, A::forward_home);
      [[fallthrough]];
    case S::buffering:
      // Only the home decides that the element does not exist, so only it creates one.
      if (may_create) return become(e, S::local, -1, e.epoch + 1, A::create_on_demand);
      return become(e, S::buffering, -1, e.epoch, A::buffer);
  }
  return fail(e, "unknown location state");
}

outcome on_created_here(const location_entry& e, const event& ev) {
  if (e.state == S::local) return fail(e, "an element already exists at this index on this node");
  if (e.state == S::arriving) return fail(e, "created where the element is migrating to");
  if (e.home) {
    // The home issues the epoch: one past any earlier element at this index.
    if (e.state == S::remote) return keep(e, A::buffer);  // perhaps deleted there, the news on its way
    return become(e, S::local, -1, e.epoch + 1, e.state == S::buffering ? A::flush : A::record);
  }
  if (ev.epoch <= e.epoch) return fail(e, "created with an epoch no newer than one this node knows");
  return become(e, S::local, -1, ev.epoch, A::record);  // the home recorded it before asking
}

outcome on_created_at(const location_entry& e, const event& ev) {
  if (!e.home) return fail(e, "only the home places a new element on another node");
  if (e.state == S::remote) return keep(e, A::buffer);  // as in on_created_here
  if (e.state != S::none && e.state != S::buffering) return fail(e, "an element already exists at this index");
  return become(e, S::remote, ev.node, e.epoch + 1, e.state == S::buffering ? A::flush : A::record);
}

outcome on_announced(const location_entry& e, const event& ev) {
  if (e.state == S::local) return fail(e, "a migration announced to where the element already is");
  if (e.state == S::arriving) return fail(e, "a second migration announced before the first landed");
  if (e.home && e.state != S::remote) return fail(e, "a migration announced to its home, which knows of no such element");
  if (ev.epoch <= e.epoch) return fail(e, "a migration announced with an epoch no newer than the known one");
  return become(e, S::arriving, -1, ev.epoch, A::record);
}

outcome on_landed(const location_entry& e, const event& ev) {
  switch (e.state) {
    case S::arriving:
      if (ev.epoch != e.epoch) return fail(e, "landed with another epoch than announced");
      return become(e, S::local, -1, ev.epoch, A::flush, true);
    case S::none:
      if (e.home) return fail(e, "landed at its home, which knows of no such element");
      [[fallthrough]];
    case S::remote:
      if (ev.epoch <= e.epoch) return fail(e, "landed with an epoch no newer than the known one");
      return become(e, S::local, -1, ev.epoch, A::record, true);
    case S::local: return fail(e, "landed where the element already is");
    case S::buffering: return fail(e, "landed at its home, which knows of no such element");
  }
  return fail(e, "unknown location state");
}

outcome on_routing_update(const location_entry& e, const event& ev) {
  bool newer = ev.epoch > e.epoch;
  switch (e.state) {
    case S::remote: return newer ? become(e, S::remote, ev.node, ev.epoch, A::record) : keep(e, A::ignore);
    case S::none:
      if (!newer) return keep(e, A::ignore);
      if (e.home) return fail(e, "the home hears of an element it never placed");
      return become(e, S::remote, ev.node, ev.epoch, A::record);
    case S::arriving:
      return ev.epoch < e.epoch ? keep(e, A::ignore) : fail(e, "news of the element past the migration announced here");
    case S::local: return newer ? fail(e, "news of the element newer than its copy here") : keep(e, A::ignore);
    case S::buffering: return newer ? fail(e, "the home hears of an element it never placed") : keep(e, A::ignore);
  }
  return fail(e, "unknown location state");
}

outcome on_deleted_at(const location_entry& e, const event& ev) {
  if (!e.home) return fail(e, "only the home hears of deletions elsewhere");
  if (e.state != S::remote || e.node != ev.node || e.epoch != ev.epoch)
    return fail(e, "a deletion the home's record of the element does not match");
  // The epoch stays as a tombstone; insertions held for this deletion go ahead.
  return become(e, S::none, -1, e.epoch, A::flush);
}

outcome on_expired(const location_entry& e) {
  if (e.state == S::local || e.state == S::arriving) return keep(e, A::ignore);
  if (e.home) {
    // The home's record of no element (epoch > 0: a tombstone) may be forgotten too, provided
    // the index's next record starts at an epoch past it (the runtime's epoch floor).
    return keep(e, e.state == S::none ? A::record : A::ignore);
  }
  return become(e, S::none, -1, 0, A::record);
}

}  // namespace

outcome transition(const location_entry& e, const event& ev) {
  if (e.state == S::buffering && !e.home) return fail(e, "a node that is not the home is buffering");
  switch (ev.kind) {
    case event_kind::created_here: return on_created_here(e, ev);
    case event_kind::created_at: return on_created_at(e, ev);
    case event_kind::message_arrived: return on_message(e, ev, false);
    case event_kind::message_may_create: return on_message(e, ev, true);
    case event_kind::migrated_away:
      if (e.state != S::local) return fail(e, "migrated away from a node it is not on");
      return become(e, S::remote, ev.node, e.epoch + 1, A::record);
    case event_kind::migration_announced: return on_announced(e, ev);
    case event_kind::migration_landed: return on_landed(e, ev);
    case event_kind::routing_update: return on_routing_update(e, ev);
    case event_kind::deleted_here:
      if (e.state != S::local) return fail(e, "deleted on a node it is not on");
      return become(e, S::none, -1, e.epoch, A::record, true);
    case event_kind::deleted_at: return on_deleted_at(e, ev);
    case event_kind::cache_expired: return on_expired(e);
  }
  return fail(e, "unknown event");
}

const char* name(location_state s) {
  switch (s) {
    case S::none: return "none";
    case S::local: return "local";
    case S::remote: return "remote";
    case S::arriving: return "arriving";
    case S::buffering: return "buffering";
  }
  return "?";
}

const char* name(event_kind k) {
  switch (k) {
    case event_kind::created_here: return "created_here";
    case event_kind::created_at: return "created_at";
    case event_kind::message_arrived: return "message_arrived";
    case event_kind::message_may_create: return "message_may_create";
    case event_kind::migrated_away: return "migrated_away";
    case event_kind::migration_announced: return "migration_announced";
    case event_kind::migration_landed: return "migration_landed";
    case event_kind::routing_update: return "routing_update";
    case event_kind::deleted_here: return "deleted_here";
    case event_kind::deleted_at: return "deleted_at";
    case event_kind::cache_expired: return "cache_expired";
  }
  return "?";
}

const char* name(action a) {
  switch (a) {
    case A::record: return "record";
    case A::ignore: return "ignore";
    case A::deliver: return "deliver";
    case A::deliver_and_update: return "deliver_and_update";
    case A::forward: return "forward";
    case A::forward_home: return "forward_home";
    case A::buffer: return "buffer";
    case A::flush: return "flush";
    case A::create_on_demand: return "create_on_demand";
    case A::error: return "error";
  }
  return "?";
}

}  // namespace squall::arrays
