// SPDX-License-Identifier: BSD-3-Clause
// Broadcasts, exactly once per element under migration (the paper's section 5.1): node 0
// numbers them, so every node sees them in one order; an element carries the number of the
// last one it received, is skipped by any it already has, and on arriving is brought up to
// date from the node's record of past broadcasts (kept until the next quiescence).
#include <exception>
#include <vector>

#include "runtime.hpp"

namespace squall::arrays::detail {

void array_state::request_broadcast(std::uint64_t entry_id, std::string args) {
  header h;
  h.what = kind::bcast_request;
  h.source = rt().me;
  h.id = entry_id;
  send_to(0, h, key(), args);
}

void array_state::on_bcast_request(const message& m) {
  header h;
  h.what = kind::bcast;
  h.source = rt().me;
  h.id = m.h.id;
  h.a = ++bcast_issued_;
  for (int n = 0; n < rt().nodes; ++n) send_to(n, h, key(), m.body);
  count().broadcasts.add_from_one_thread();
}

void array_state::on_bcast(const message& m) {
  const std::uint64_t serial = m.h.a;
  past_[serial] = {m.h.id, std::string(m.body)};
  bcast_seen_ = serial;
  // Delivering may move or delete elements (and send, which adds cache entries): take the
  // receivers first.
  std::vector<entry_rec*> receivers;
  table_.for_each([&](entry_rec& e) {
    if (e.s && e.s->bcast_count < serial) receivers.push_back(&e);
  });
  // What an element's method throws is thrown once every receiver has run it: thrown at
  // once, it left the node's other elements without the broadcast, for good (their count
  // says nothing of it, and the next broadcast's serial passes it).
  std::exception_ptr failed;
  for (entry_rec* e : receivers) {
    if (!e->s || e->s->bcast_count >= serial) continue;  // left, or already has it
    e->s->bcast_count = serial;
    keeping_failure(failed, [&] { invoke_entry(*e->elem, m.h.id, m.body, nullptr); });
    after_entry(*e);  // what it asked for, thrown or not (as a one-way method's)
  }
  if (failed) std::rethrow_exception(failed);
}

void array_state::catch_up(entry_rec& e) {
  std::exception_ptr failed;  // as on_bcast: the element still gets every later one
  while (e.s && e.s->bcast_count < bcast_seen_) {
    auto next = past_.upper_bound(e.s->bcast_count);
    if (next == past_.end()) break;
    e.s->bcast_count = next->first;
    keeping_failure(failed, [&] { invoke_entry(*e.elem, next->second.first, next->second.second, nullptr); });
    after_entry(e);
  }
  if (failed) std::rethrow_exception(failed);
}

}  // namespace squall::arrays::detail
