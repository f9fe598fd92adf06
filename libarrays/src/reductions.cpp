// SPDX-License-Identifier: BSD-3-Clause
// Reductions, exact under migration, insertion and deletion (the paper's section 5.2).
//
// Each element carries the number of the next reduction it will contribute to. A node
// collects reduction r until none of its elements still owes r, then reports to node 0 the
// combined value, how many values it holds, and its net births (elements created here minus
// those deleted here) at that instant. An element that contributes to r after its node
// reported r (it arrived by migration, or is late) sends its value to node 0 directly. Node 0
// asks every node to report r once it hears of r at all (a node with no elements has nothing
// to start it), and finishes r when every node reported and the values counted equal the sum
// of net births: the number of elements alive. A deleted element that already contributed to
// open reductions counts as alive for them (the delayed net-births adjustment).
#include "runtime.hpp"

namespace squall::arrays::detail {
namespace {

constexpr std::int32_t late = 0, report = 1;  // red_part's `node` field

}  // namespace

void array_state::count_out(std::uint64_t red_count) {
  auto it = by_red_count_.find(red_count);
  if (--it->second == 0) by_red_count_.erase(it);
}

void array_state::add_to(partial& p, std::uint64_t reducer_id, std::uint64_t value_type, std::string_view value,
                         const callback& then, std::uint64_t count) {
  if (count == 0 || p.failed) return;
  if (p.count == 0) {
    p.reducer = reducer_id;
    p.value_type = value_type;
    p.then = then;
  } else {
    if (p.reducer != reducer_id || p.value_type != value_type) {
      p.failed = true;
      throw squall::usage_error("libarrays: a reduction of array " + std::to_string(id_) +
                                " was given two reducers (" + std::string(reducer_name(p.reducer)) + " and " +
                                std::string(reducer_name(reducer_id)) + "): every element contributes with the same one");
    }
    if (!(p.then == then)) {
      p.failed = true;
      throw squall::usage_error("libarrays: a reduction of array " + std::to_string(id_) +
                                " was given two callbacks: every element contributes with the same one");
    }
  }
  p.values.emplace_back(value);
  p.count += count;
}

std::string array_state::fold(partial& p) const {
  if (p.values.empty()) return {};
  std::string out;
  if (p.values.size() == 1) {
    out = std::move(p.values[0]);
  } else {
    reducer(p.reducer, p.value_type)(out, p.values);
  }
  p.values.clear();
  return out;
}

void array_state::contribute(slot& s, std::uint64_t reducer_id, std::uint64_t value_type, std::string value,
                             const callback& then) {
  reducer(reducer_id, value_type);  // a clear error here rather than on node 0
  const std::uint64_t r = s.red_count;
  count_out(r);
  s.red_count = r + 1;
  count_in(r + 1);
  if (r < red_current_) {
    header h;
    h.what = kind::red_part;
    h.source = rt().me;
    h.node = late;
    h.id = reducer_id;
    h.a = r;
    h.b = 1;
    send_to(0, h, key(), encode(then, value_type, value));
  } else {
    add_to(parts_[r], reducer_id, value_type, value, then, 1);
  }
  check_reductions();
}

void array_state::check_reductions() {
  for (;;) {
    const std::uint64_t r = red_current_;
    if (!by_red_count_.empty() && by_red_count_.begin()->first <= r) return;  // an element owes r
    auto it = parts_.find(r);
    const bool have = it != parts_.end() && it->second.count > 0;
    if (!have && requested_.count(r) == 0) return;  // r has not started
    partial p = have ? std::move(it->second) : partial{};
    if (it != parts_.end()) parts_.erase(it);
    requested_.erase(r);
    header h;
    h.what = kind::red_part;
    h.source = rt().me;
    h.node = report;
    h.id = p.reducer;
    h.a = r;
    h.b = p.count;
    h.c = births_ - deaths_;
    send_to(0, h, key(), encode(p.then, p.value_type, fold(p)));
    red_current_ = r + 1;
    if (auto d = delayed_deaths_.find(red_current_); d != delayed_deaths_.end()) {
      deaths_ += d->second;
      delayed_deaths_.erase(d);
    }
  }
}

void array_state::on_red_part(const message& m) {
  auto [then, value_type, value] = decode<callback, std::uint64_t, std::string>(m.body, "a reduction part");
  const std::uint64_t r = m.h.a;
  auto [it, first] = root_.try_emplace(r);
  root_state& st = it->second;
  if (first) {  // every node reports r, even one whose elements never start it
    header h;
    h.what = kind::red_request;
    h.source = rt().me;
    h.a = r;
    for (int n = 0; n < rt().nodes; ++n) send_to(n, h, key(), {});
  }
  add_to(st.p, m.h.id, value_type, value, then, m.h.b);
  if (m.h.node == report) {
    st.net += m.h.c;
    ++st.reported;
  }
  if (st.reported < rt().nodes) return;
  const auto counted = static_cast<std::int64_t>(st.p.count);
  if (counted > st.net) protocol_error("a reduction counted more values than elements alive", m);
  if (counted < st.net) return;  // migrators' values are still on their way
  partial done = std::move(st.p);
  root_.erase(it);
  count().reductions.add_from_one_thread();
  if (done.count != 0) finish(done);
}

void array_state::on_red_request(const message& m) {
  if (m.h.a < red_current_) return;  // reported already
  requested_.insert(m.h.a);
  check_reductions();
}

void array_state::finish(partial& p) {
  const callback& cb = p.then;
  const std::string value = fold(p);
  switch (cb.how) {
    case callback::kind::root_function: return run_callback(cb.id, value);
    case callback::kind::every_node_function: {
      header h;
      h.what = kind::red_result;
      h.source = rt().me;
      h.id = cb.id;
      for (int n = 0; n < rt().nodes; ++n) send_to(n, h, key(), value);
      return;
    }
    case callback::kind::broadcast: return callback_array(cb).request_broadcast(cb.id, value);
    case callback::kind::element: return callback_array(cb).send_invoke(key(cb.key), cb.id, value, 0);
  }
}

// The array a callback goes to, which may have been destroyed while the reduction ran.
array_state& array_state::callback_array(const callback& cb) const {
  if (cb.array < rt().arrays.size() && rt().arrays[cb.array] == nullptr) {
    throw squall::usage_error("libarrays: a reduction of array " + std::to_string(id_) + " ends in a callback to array " +
                              std::to_string(cb.array) + ", which was destroyed");
  }
  return array_at(cb.array);
}

}  // namespace squall::arrays::detail
