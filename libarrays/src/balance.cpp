// SPDX-License-Identifier: BSD-3-Clause
// at_sync(): every node reports its elements' loads (and the bytes they sent each other) to
// node 0, which runs the strategy (strategies.hpp) and sends every node the moves for its
// elements; the moves are migrations like any other, so messages in flight still arrive.
#include <squall/arrays/balance.hpp>

#include <array>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "runtime.hpp"
#include "strategies.hpp"

namespace squall::arrays::detail {
namespace {

using comm_list = std::vector<std::pair<std::string, std::uint64_t>>;
using element_report = std::tuple<std::string, double, comm_list>;  // key, load, sent
using move_list = std::vector<std::pair<std::string, int>>;          // key, new node

std::vector<int> plan(strategy how, const std::vector<lb_element>& elements, int nodes) {
  switch (how) {
    case strategy::greedy: return greedy_plan(elements, nodes);
    case strategy::refine: return refine_plan(elements, nodes);
    case strategy::metis: return metis_plan(elements, nodes);
  }
  throw squall::usage_error("libarrays: unknown load-balancing strategy");
}

double most(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, x);
  return m;
}

// Node 0: decides, and sends each node its moves and the report.
void decide(array_state& a, strategy how) {
  runtime& r = rt();
  std::vector<lb_element> elements;
  std::vector<std::string> keys;
  std::vector<comm_list> sent;
  for (const auto& [node, bytes] : r.lb_reports) {
    auto [list] = decode<std::vector<element_report>>(bytes, "a load report");
    for (auto& [k, load, comm] : list) {
      lb_element e;
      e.load = load;
      e.node = node;
      elements.push_back(e);
      keys.push_back(std::move(k));
      sent.push_back(std::move(comm));
    }
  }
  std::unordered_map<std::string, std::size_t> position;
  for (std::size_t i = 0; i < keys.size(); ++i) position.emplace(keys[i], i);
  for (std::size_t i = 0; i < sent.size(); ++i) {
    for (const auto& [to, bytes] : sent[i]) {
      if (auto it = position.find(to); it != position.end()) elements[i].edges.emplace_back(it->second, static_cast<double>(bytes));
    }
  }
  const std::vector<int> placement = plan(how, elements, r.nodes);
  std::vector<move_list> moves(static_cast<std::size_t>(r.nodes));
  std::size_t migrations = 0;
  for (std::size_t i = 0; i < elements.size(); ++i) {
    if (placement[i] == elements[i].node) continue;
    moves[static_cast<std::size_t>(elements[i].node)].emplace_back(keys[i], placement[i]);
    ++migrations;
  }
  std::vector<int> before(elements.size());
  for (std::size_t i = 0; i < elements.size(); ++i) before[i] = elements[i].node;
  const std::vector<double> load_before = node_loads(elements, before, r.nodes);
  double total = 0;
  for (double x : load_before) total += x;
  const std::array<double, 5> report{static_cast<double>(elements.size()), static_cast<double>(migrations),
                                     most(load_before), most(node_loads(elements, placement, r.nodes)),
                                     total / r.nodes};
  header h;
  h.what = kind::lb_plan;
  h.source = r.me;
  h.array = a.id();
  for (int n = 0; n < r.nodes; ++n) send(n, h, {}, encode(moves[static_cast<std::size_t>(n)], report));
}

}  // namespace

std::string array_state::load_report() {
  std::vector<element_report> list;
  table_.for_each([&list](const entry_rec& e) {
    if (!e.s) return;
    comm_list comm;
    for (const auto& [to, bytes] : e.s->sent_to) comm.emplace_back(to.bytes(), bytes);
    list.emplace_back(e.k.bytes(), e.elem->measured_load(), std::move(comm));
  });
  return encode(list);
}

void array_state::start_measurement() {
  measure_load_ = true;
  table_.for_each([](entry_rec& e) {
    if (!e.s) return;
    e.s->load_s = 0;
    e.s->load_ticks = 0;
    e.s->sent_to.clear();
  });
}

std::size_t array_state::move(const key& k, int to) {
  entry_rec* e = find(k);
  if (e == nullptr || !e->elem) throw squall::usage_error("libarrays: at_sync(): an element left its node during the step");
  if (to == rt().me) return 0;
  migrate(*e, to);
  return 1;
}

balance_report at_sync(std::uint32_t array, strategy how) {
  quiesce();  // checks the caller, and nothing moves while loads are read
  runtime& r = rt();
  array_state& a = array_at(array);
  r.lb_reports.clear();
  r.lb_plan_here = false;
  header h;
  h.what = kind::lb_report;
  h.source = r.me;
  h.array = array;
  send(0, h, {}, a.load_report());
  if (r.me == 0) {
    run_until([&] { return static_cast<int>(r.lb_reports.size()) == r.nodes; });
    decide(a, how);
  }
  run_until([&] { return r.lb_plan_here; });
  auto [moves, figures] = decode<move_list, std::array<double, 5>>(r.lb_plan, "a load-balancing plan");
  for (const auto& [k, to] : moves) a.move(key(k), to);
  quiesce();
  a.start_measurement();
  r.lb_reports.clear();
  balance_report out;
  out.elements = static_cast<std::size_t>(figures[0]);
  out.migrations = static_cast<std::size_t>(figures[1]);
  out.max_before = figures[2];
  out.max_after = figures[3];
  out.average = figures[4];
  return out;
}

}  // namespace squall::arrays::detail
