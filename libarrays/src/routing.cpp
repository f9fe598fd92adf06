// SPDX-License-Identifier: BSD-3-Clause
// Messages to elements: where to send them, and what to do with one that arrives, as the
// location state machine (location.hpp) says. Insertions and location news go through it too.
#include <algorithm>
#include <cstring>
#include <exception>
#include <string>

#include "in_place.hpp"
#include "runtime.hpp"

namespace squall::arrays::detail {

array_state::array_state(std::uint32_t id, const element_ops& ops, home_map homes, const in_place_options* in_place)
    : id_(id), ops_(ops), homes_(std::move(homes)) {
  if (in_place != nullptr) in_place_ = std::make_unique<slot_store>(ops, *in_place);
}

array_state::~array_state() = default;

int array_state::home_of(const key& k) const { return homes_.home_of(k, rt().nodes); }

entry_rec& array_state::entry(std::uint64_t hash, std::string_view key_bytes) {
  auto [e, added] = table_.find_or_add(hash, key_bytes, [key_bytes] { return key(std::string(key_bytes)); });
  if (added) {
    e->home = home_of(e->k);
    e->loc.home = e->home == rt().me;
    if (e->loc.home) e->loc.epoch = epoch_floor_;  // past any tombstone forgotten here
  }
  e->last_used = quiescences_;
  return *e;
}

// At quiescence (no location news in flight: PROTOCOL.md): forgets the entries of elements
// this node has not sent to nor heard of since the quiescence before last, where the machine's
// cache_expired says they may go - what a node that is not the home merely remembers, and the
// home's records of elements deleted (tombstones) - so that a node that once sent to many
// indices, or the home of an adaptive array's many short-lived ones, does not keep an entry
// for each for ever. Local elements, locations the home is responsible for and entries
// holding messages stay. The epoch floor keeps a forgotten tombstone's epoch for the index's
// next element.
std::size_t array_state::expire_caches() {
  ++quiescences_;
  return table_.erase_if([this](const entry_rec& e) {
    if (!e.held.empty() || e.last_used + 2 > quiescences_) return false;
    if (transition(e.loc, {event_kind::cache_expired}).act != action::record) return false;
    if (e.loc.home) epoch_floor_ = std::max(epoch_floor_, e.loc.epoch);
    return true;
  });
}

// Where this node sends a message for the element: where it knows it to be, else its home.
// A message that stays here meets the state machine when the scheduler runs it.
int array_state::route(const entry_rec& e) const {
  switch (e.loc.state) {
    case location_state::remote: return e.loc.node;
    case location_state::none: return e.home;
    default: return rt().me;
  }
}

void array_state::send_to(int node, header h, const key& k, std::string_view body) {
  h.array = id_;
  send(node, h, k.bytes(), body);
}

void array_state::tell(int node, kind what, const key& k, std::uint32_t epoch) {
  header h;
  h.what = what;
  h.source = rt().me;
  h.node = rt().me;
  h.epoch = epoch;
  send_to(node, h, k, {});
}

void array_state::send_invoke(const key& k, std::uint64_t entry_id, std::string_view args, std::uint64_t reply_slot) {
  header h;
  h.what = kind::invoke;
  h.source = rt().me;
  h.id = entry_id;
  h.a = reply_slot;
  if (record_comm_) {
    slot* sender = rt().running;
    if (sender != nullptr && sender->array == this) sender->sent_to[k] += args.size() + sizeof h;
  }
  send_to(route(entry(k)), h, k, args);
}

void array_state::insert(const key& k, int on) {
  header h;
  h.what = kind::insert;
  h.source = rt().me;
  h.node = on;
  send_to(home_of(k), h, k, {});
}

void array_state::handle(const message& m, std::string_view bytes) {
  switch (m.h.what) {
    case kind::invoke: return on_invoke(m, bytes, m.h.id != 0 ? &detail::entry(m.h.id) : nullptr);
    case kind::insert: return on_insert(m, bytes);
    case kind::create: return on_create(m);
    case kind::migrate: return on_migrate(m);
    case kind::routing_update: return on_routing_update(m);
    case kind::deleted: return on_deleted(m, bytes);
    case kind::bcast_request: return on_bcast_request(m);
    case kind::bcast: return on_bcast(m);
    case kind::red_part: return on_red_part(m);
    case kind::red_request: return on_red_request(m);
    case kind::red_result: return run_callback(m.h.id, m.body);
    case kind::reply:
      if ((m.h.flags & failed_flag) != 0) rt().failed_slots[m.h.a] = std::string(m.body);
      rt().done_slots[m.h.a] = std::string(m.body);
      return;
    case kind::held:
      if (m.h.b != 0) {  // released: the element exists now
        rt().held_slots.erase(m.h.a);
      } else if (rt().open_slots.count(m.h.a) != 0 && rt().done_slots.count(m.h.a) == 0) {
        rt().held_slots[m.h.a] = "element " + index_text(key(std::string(m.key))) + " of array " + std::to_string(id_) +
                                 ", which its home, node " + std::to_string(m.h.source) +
                                 ", holds because no such element exists (never inserted, or deleted)";
      }
      return;
    case kind::restore: return on_restore(m);
    case kind::free_slot: return in_place_->free_slot(static_cast<std::uint32_t>(m.h.a));
    case kind::lb_report: rt().lb_reports.emplace_back(m.h.source, std::string(m.body)); return;
    case kind::lb_plan:
      rt().lb_plan = std::string(m.body);
      rt().lb_plan_here = true;
      return;
  }
  protocol_error("a message of unknown kind", m);
}

void array_state::on_invoke(const message& m, std::string_view bytes, const entry_info* method) {
  entry_rec& e = entry_of(m);
  const key& k = e.k;
  event ev{method != nullptr && method->creates ? event_kind::message_may_create : event_kind::message_arrived};
  ev.forwarded = (m.h.flags & forwarded_flag) != 0;
  const outcome o = transition(e.loc, ev);
  if (o.act == action::error) protocol_error(o.why, m);
  e.loc = o.entry;
  switch (o.act) {
    case action::deliver_and_update:
      if (m.h.source != rt().me) {
        tell(m.h.source, kind::routing_update, k, e.loc.epoch);
        ++rt().counts.routing_updates;
        count().routing_updates.add_from_one_thread();
      }
      [[fallthrough]];
    case action::deliver: return run_entry(e, method, m);
    case action::forward:
    case action::forward_home: {
      header h = m.h;
      h.flags |= forwarded_flag;
      ++h.hops;
      send_to(o.act == action::forward ? e.loc.node : e.home, h, k, m.body);
      ++rt().counts.forwarded;
      count().forwarded.add_from_one_thread();
      return;
    }
    case action::buffer:
      e.held.emplace_back(bytes);
      ++rt().counts.held;
      count().held.add_from_one_thread();
      // A request held for an element that does not exist: its requester's get() may say so.
      if (m.h.a != 0 && e.loc.state == location_state::buffering) tell_held(m.h.a, k, /*released=*/false);
      return;
    case action::create_on_demand: {
      construct(e, k, e.loc.epoch);
      std::exception_ptr failed;  // what a held message threw: this one still runs, after it
      keeping_failure(failed, [&] { flush(e); });
      if (e.elem) run_entry(e, method, m);
      else on_invoke(m, bytes, method);  // a held message moved it on: route this one again
      if (failed) std::rethrow_exception(failed);
      return;
    }
    default: protocol_error("an invoke with an unexpected outcome", m);
  }
}

void array_state::run_entry(entry_rec& e, const entry_info* method, const message& m) {
  if (method == nullptr) {  // a proxy's destroy()
    e.s->destroy = true;
    return after_entry(e);
  }
  const std::uint64_t reply_slot = m.h.a;
  if (reply_slot == 0) {
    try {
      invoke_entry(*e.elem, *method, m.body, nullptr);
    } catch (...) {
      // A migrate_me or destroy_me it asked for takes effect now, as after a request that
      // throws: left in the slot, it took effect after whichever method ran next, much later.
      after_entry(e);
      throw;
    }
    return after_entry(e);
  }
  // A request: what the method throws goes to the future, whose get() throws it. Thrown here,
  // it reached only this node's scheduler, and the requester waited for ever (the node that
  // threw, too, when it was in quiesce with the requester in get()).
  header r;
  r.what = kind::reply;
  r.source = rt().me;
  r.a = reply_slot;
  std::string result;
  const auto failed = [&](const char* why) {
    r.flags = failed_flag;
    result = "libarrays: request " + std::string(method->name) + " to an element of array " + std::to_string(id_) +
             " failed on node " + std::to_string(rt().me) + ": " + why;
  };
  try {
    invoke_entry(*e.elem, *method, m.body, &result);
  } catch (const std::exception& x) {
    failed(x.what());
  } catch (...) {
    failed("an exception that is not a std::exception");
  }
  send_to(static_cast<int>(reply_slot >> 40), r, key(), result);
  after_entry(e);
}

// What the entry method asked for takes effect now that it has returned.
void array_state::after_entry(entry_rec& e) {
  if (!e.s) return;
  slot& s = *e.s;
  const int to = s.migrate_to;
  s.migrate_to = -1;
  if (s.destroy) {
    const outcome o = transition(e.loc, {event_kind::deleted_here});
    e.loc = o.entry;
    const key k = s.k;
    const std::uint64_t red_count = s.red_count;
    destroy_element(e);
    remove_local(e);
    if (red_count > red_current_) {
      delayed_deaths_[red_count] += 1;  // it has contributed to reductions still open here
    } else {
      ++deaths_;
    }
    if (o.inform_home) tell(e.home, kind::deleted, k, e.loc.epoch);
    check_reductions();
  } else if (to >= 0 && to != rt().me) {
    migrate(e, to);
  }
}

void array_state::on_insert(const message& m, std::string_view bytes) {
  entry_rec& e = entry_of(m);
  const key& k = e.k;
  const int on = m.h.node;
  const bool here = on < 0 || on == rt().me;
  event ev{here ? event_kind::created_here : event_kind::created_at, on};
  const outcome o = transition(e.loc, ev);
  if (o.act == action::error) {
    throw squall::usage_error(std::string("libarrays: insert into array ") + std::to_string(id_) + ": " + o.why);
  }
  if (o.act == action::buffer) {
    e.held.emplace_back(bytes);
    return;
  }
  e.loc = o.entry;
  if (here) {
    construct(e, k, e.loc.epoch);
  } else {
    header h;
    h.what = kind::create;
    h.source = rt().me;
    h.epoch = e.loc.epoch;
    send_to(on, h, k, {});
  }
  if (o.act == action::flush) flush(e);
}

void array_state::on_create(const message& m) {
  entry_rec& e = entry_of(m);
  const key& k = e.k;
  const outcome o = transition(e.loc, {event_kind::created_here, -1, m.h.epoch});
  if (o.act == action::error) protocol_error(o.why, m);
  e.loc = o.entry;
  construct(e, k, e.loc.epoch);
  if (o.act == action::flush) flush(e);
}

void array_state::construct(entry_rec& e, const key& k, std::uint32_t) {
  auto s = std::make_unique<slot>();
  s->array = this;
  s->k = k;
  s->bcast_count = bcast_seen_;  // it receives the broadcasts that arrive after its birth
  s->red_count = red_current_;
  element_ptr elem = new_element(s->place);
  install(e, k, std::move(elem), std::move(s));
  ++births_;
}

void array_state::on_routing_update(const message& m) {
  entry_rec& e = entry_of(m);
  const outcome o = transition(e.loc, {event_kind::routing_update, m.h.node, m.h.epoch});
  if (o.act == action::error) protocol_error(o.why, m);
  e.loc = o.entry;
  if (o.act == action::flush) flush(e);
}

void array_state::on_deleted(const message& m, std::string_view) {
  entry_rec& e = entry_of(m);
  const outcome o = transition(e.loc, {event_kind::deleted_at, m.h.node, m.h.epoch});
  if (o.act == action::error) protocol_error(o.why, m);
  e.loc = o.entry;
  if (o.act == action::flush) flush(e);
}

// Runs what the entry held through the machine again, in arrival order.
void array_state::flush(entry_rec& e) {
  std::vector<std::string> held;
  held.swap(e.held);
  // What one of them throws (a one-way entry method, an insertion of an index that exists)
  // is thrown once the others have run. Thrown at once, it dropped every message held
  // behind it, already taken out of the entry: lost, without a word.
  std::exception_ptr failed;
  for (const std::string& bytes : held) {
    const message m = read_message(bytes);
    // A request the home held, whose requester may have been told so: no longer.
    if (e.loc.home && m.h.what == kind::invoke && m.h.a != 0) tell_held(m.h.a, e.k, /*released=*/true);
    keeping_failure(failed, [&] { handle(m, bytes); });
  }
  if (failed) std::rethrow_exception(failed);
}

void array_state::tell_held(std::uint64_t slot, const key& k, bool released) {
  header h;
  h.what = kind::held;
  h.source = rt().me;
  h.a = slot;
  h.b = released ? 1 : 0;
  send_to(static_cast<int>(slot >> 40), h, k, {});
}

std::size_t array_state::settle_held(std::string& duplicate) {
  std::size_t failed = 0;
  table_.for_each([&](entry_rec& e) {
    const bool exists = e.loc.state == location_state::local || e.loc.state == location_state::remote;
    std::erase_if(e.held, [&](const std::string& bytes) {
      const message m = read_message(bytes);
      if (m.h.what == kind::insert && exists) {  // held as if a deletion were on its way: none is
        if (duplicate.empty()) {
          const int where = e.loc.state == location_state::local ? rt().me : e.loc.node;
          duplicate = "libarrays: insert of element " + index_text(e.k) + " into array " + std::to_string(id_) +
                      ": it exists already, on node " + std::to_string(where) + " (an index inserted twice)";
        }
        return true;
      }
      if (m.h.what != kind::invoke || m.h.a == 0) return false;
      header r;
      r.what = kind::reply;
      r.flags = failed_flag;
      r.source = rt().me;
      r.a = m.h.a;
      const std::string why = "libarrays: a request to an element of array " + std::to_string(id_) +
                              " that does not exist (never inserted, or deleted), found at quiescence";
      send_to(static_cast<int>(m.h.a >> 40), r, key(), why);
      ++failed;
      return true;
    });
  });
  return failed;
}

std::optional<key> array_state::drop_held_request(std::uint64_t slot) {
  std::optional<key> found;
  table_.for_each([&](entry_rec& e) {
    std::erase_if(e.held, [&](const std::string& bytes) {
      const message m = read_message(bytes);
      if (m.h.what != kind::invoke || m.h.a != slot) return false;
      found = e.k;
      return true;
    });
  });
  return found;
}

std::string array_state::index_text(const key& k) const {
  const std::string& b = k.bytes();
  if (ops_.index_name.starts_with("squall::arrays::index<") && b.size() % sizeof(std::int32_t) == 0) {
    std::string out = "(";  // index<N>'s key is its N integers (key.hpp)
    for (std::size_t i = 0; i < b.size(); i += sizeof(std::int32_t)) {
      std::int32_t x = 0;
      std::memcpy(&x, b.data() + i, sizeof x);
      out += (i == 0 ? "" : ", ") + std::to_string(x);
    }
    return out + ")";
  }
  static constexpr char digits[] = "0123456789abcdef";
  std::string out = "with key bytes ";
  for (const unsigned char c : b) (out += digits[c >> 4]) += digits[c & 15];
  return out;
}

std::size_t array_state::held_messages(std::string& first) const {
  std::size_t n = 0;
  table_.for_each([&](const entry_rec& e) {
    if (!e.held.empty() && first.empty()) first = "element " + index_text(e.k) + " of array " + std::to_string(id_);
    n += e.held.size();
  });
  return n;
}

}  // namespace squall::arrays::detail
