// SPDX-License-Identifier: BSD-3-Clause
// Elements arriving and leaving: migration packs an element with cereal, ships it with its
// broadcast and reduction counts, and unpacks it into a new object on the destination, which
// tells the home (the paper's section 4.4); an element in place (in_place.hpp) travels as its
// slot's bytes and goes on at the same address. The old node keeps a pointer to where it went.
#include <exception>
#include <string>

#include "in_place.hpp"
#include "runtime.hpp"

namespace squall::arrays::detail {

void array_state::install(entry_rec& e, const key& k, element_ptr elem, std::unique_ptr<slot> s) {
  detail_access::slot_of(*elem) = s.get();
  detail_access::set_key(*elem, k);
  count_in(s->red_count);
  e.elem = std::move(elem);
  e.s = std::move(s);
  ++locals_;
}

// The bookkeeping of an element that leaves this node (its object is the caller's).
void array_state::remove_local(entry_rec& e) {
  count_out(e.s->red_count);
  e.s.reset();
  --locals_;
}

element_ptr array_state::new_element(std::uint32_t& place) {
  if (in_place_) return element_ptr(in_place_->construct(place), element_deleter{true});
  return element_ptr(ops_.make(), element_deleter{false});
}

void array_state::destroy_element(entry_rec& e) {
  const std::uint32_t place = e.s->place;
  e.elem.reset();
  if (in_place_ && !in_place_->release(place)) {
    header h;
    h.what = kind::free_slot;
    h.source = rt().me;
    h.a = place;
    send_to(in_place_->owner(place), h, key(), {});
  }
}

void array_state::delete_elements() {
  table_.for_each([](entry_rec& e) { e.elem.reset(); });
}

void array_state::migrate(entry_rec& e, int to) {
  const outcome o = transition(e.loc, {event_kind::migrated_away, to});
  if (o.act == action::error) throw squall::usage_error(std::string("libarrays: migrate_me: ") + o.why);
  header h;
  h.what = kind::migrate;
  h.source = rt().me;
  h.epoch = o.entry.epoch;
  h.a = e.s->bcast_count;
  h.b = e.s->red_count;
  std::string body;
  if (in_place_) {
    // The slot's bytes, element and heap, go as they are; the object is not destroyed here,
    // it goes on living at the same address on the destination.
    h.flags |= in_place_flag;
    h.c = e.s->place;
    body = in_place_->leave(e.s->place);
    (void)e.elem.release();
  } else {
    ops_.pack(*e.elem, body);
    e.elem.reset();
  }
  const key k = e.s->k;
  remove_local(e);
  e.loc = o.entry;
  send_to(to, h, k, body);
  ++rt().counts.migrations_out;
  count().migrations_out.add_from_one_thread();
  check_reductions();  // it may have been the last one this node waited for
}

void array_state::on_migrate(const message& m) {
  entry_rec& e = entry_of(m);
  const key& k = e.k;
  const outcome o = transition(e.loc, {event_kind::migration_landed, -1, m.h.epoch});
  if (o.act == action::error) protocol_error(o.why, m);
  element_ptr elem;
  std::uint32_t place = 0;
  std::string unpack_failed;  // what the element's serialize() threw
  if ((m.h.flags & in_place_flag) != 0) {
    if (!in_place_) protocol_error("an element moved in place to an array that is not", m);
    place = static_cast<std::uint32_t>(m.h.c);
    in_place_->arrive(place, m.body);
    elem = element_ptr(in_place_->object(place), element_deleter{true});
  } else {
    elem = new_element(place);
    try {
      ops_.unpack(*elem, m.body);
    } catch (const std::exception& x) {
      unpack_failed = x.what();
    } catch (...) {
      unpack_failed = "an exception that is not a std::exception";
    }
  }
  auto s = std::make_unique<slot>();
  s->place = place;
  s->array = this;
  s->k = k;
  s->bcast_count = m.h.a;
  s->red_count = m.h.b;
  install(e, k, std::move(elem), std::move(s));
  e.loc = o.entry;
  ++rt().counts.migrations_in;
  count().migrations_in.add_from_one_thread();
  if (o.inform_home) tell(e.home, kind::routing_update, k, e.loc.epoch);
  if (!unpack_failed.empty()) {
    // Its state is lost. Thrown before the landing, the old node pointed here, this node's
    // entry at the home and the home at the old node: messages to the element went round
    // the three for ever and quiesce never returned. It landed (the home is told, above),
    // and is deleted now as destroy_me() would, so that its messages wait at the home and are
    // reported at quiescence; the scheduler throws why (quiesce, on every node).
    e.s->destroy = true;
    after_entry(e);
    if (o.act == action::flush) flush(e);
    throw squall::usage_error("libarrays: element " + index_text(k) + " of array " + std::to_string(id_) +
                              ", migrating from node " + std::to_string(m.h.source) +
                              ", does not unpack here (its serialize() threw: " + unpack_failed +
                              "); it is lost, as if deleted");
  }
  // What on_migrated() or a broadcast it missed throws is thrown last: what the entry held
  // still runs, and the reductions are still checked.
  std::exception_ptr failed;
  keeping_failure(failed, [&] { run_hook(e, [](element_base& x) { x.on_migrated(); }); });
  keeping_failure(failed, [&] { catch_up(e); });
  if (o.act == action::flush) keeping_failure(failed, [&] { flush(e); });
  check_reductions();
  if (failed) std::rethrow_exception(failed);
}

// An element read from a checkpoint, at its home: inserted there with its saved state.
void array_state::on_restore(const message& m) {
  entry_rec& e = entry_of(m);
  const key& k = e.k;
  const outcome o = transition(e.loc, {event_kind::created_here});
  if (o.act == action::error) protocol_error(o.why, m);
  e.loc = o.entry;
  construct(e, k, e.loc.epoch);
  try {
    ops_.unpack(*e.elem, m.body);
  } catch (const squall::usage_error& x) {
    note_restore_problem(id_, m, x);  // restart() reports it on every node, naming the file
  }
  if (o.act == action::flush) flush(e);
}

void array_state::restore(const key& k, std::string_view packed, int writer, std::uint64_t offset) {
  header h;
  h.what = kind::restore;
  h.source = rt().me;
  h.a = offset;
  h.b = static_cast<std::uint64_t>(writer);
  send_to(home_of(k), h, k, packed);
}

}  // namespace squall::arrays::detail
