// SPDX-License-Identifier: BSD-3-Clause
#include <squall/chaos/translation_table.hpp>

#include <squall/am.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include <squall/chaos/exchange.hpp>

#include "agreement.hpp"
#include "counters.hpp"

namespace squall::chaos {

struct translation_table::state {
  index global_size = 0;
  table_mode mode = table_mode::replicated;
  index page_size = 1;
  int nodes = 1, me = 0;
  std::uint64_t id = 0;  // the same on every node: tables are built collectively, in order
  std::vector<index> owned;
  // Replicated: one entry per global index. Distributed: the pages this node holds (pages
  // p with p % nodes == me), page after page.
  std::vector<location> entries;

  int holder(index g) const { return static_cast<int>((g / page_size) % nodes); }
  std::size_t slot(index g) const {
    if (mode == table_mode::replicated) return static_cast<std::size_t>(g);
    const index page = g / page_size;
    return static_cast<std::size_t>((page / nodes) * page_size + g % page_size);
  }
};

namespace {

// The distributed tables of this node, by id, for the lookup handler.
std::mutex registry_mutex;
std::map<std::uint64_t, const translation_table::state*>& registry() {
  static auto* r = new std::map<std::uint64_t, const translation_table::state*>;  // never destroyed
  return *r;
}
std::uint64_t tables_built = 0;

// A lookup in flight on the asking node: where each answer goes.
struct pending_lookup {
  location* out;
  std::vector<std::vector<std::size_t>> positions;  // per request: the caller's positions
  int outstanding = 0;  // touched under the node lock only (handler and wait predicate)
};

void on_lookup_answer(am::token&, std::uint64_t pending_address, std::uint32_t request, am::payload answers) {
  auto* p = reinterpret_cast<pending_lookup*>(pending_address);
  const auto& positions = p->positions[request];
  const auto* found = reinterpret_cast<const location*>(answers.data());
  for (std::size_t i = 0; i < positions.size(); ++i) std::memcpy(&p->out[positions[i]], &found[i], sizeof(location));
  --p->outstanding;
}

void on_lookup(am::token& t, std::uint64_t table_id, std::uint64_t pending_address, std::uint32_t request,
               am::payload globals) {
  const translation_table::state* s = nullptr;
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    auto it = registry().find(table_id);
    if (it != registry().end()) s = it->second;
  }
  if (s == nullptr) {
    std::fprintf(stderr, "squall: chaos: node %d asked node %d for a lookup in a translation table this node has "
                 "destroyed (destroy tables only when no node uses them any more)\n", t.source(), squall::node());
    std::abort();
  }
  const std::size_t n = globals.size() / sizeof(index);
  std::vector<location> answers(n);
  for (std::size_t i = 0; i < n; ++i) {
    index g;
    std::memcpy(&g, globals.data() + i * sizeof(index), sizeof g);
    answers[i] = s->entries[s->slot(g)];
  }
  t.reply<on_lookup_answer>(pending_address, request, am::as_payload(answers.data(), n));
}

[[noreturn]] void bad_global(const char* api, index g, index global_size) {
  throw usage_error(std::string(api) + ": global index " + std::to_string(g) + " is outside [0, " +
                    std::to_string(global_size) + ")");
}

std::string check_entries(const std::vector<location>& entries, const translation_table::state& s) {
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].owner < 0) {
      // Distributed tables pad their last page; only real indices must be owned.
      const index g = s.mode == table_mode::replicated
                          ? static_cast<index>(i)
                          : (static_cast<index>(i) / s.page_size * s.nodes + s.me) * s.page_size +
                                static_cast<index>(i) % s.page_size;
      if (g < s.global_size) return "no node owns global index " + std::to_string(g);
    }
  }
  return {};
}

// Collective, first in the constructor: a usage_error on every node unless every node gave the
// same global size, mode and page size. With another page size a node computes other pages'
// holders (the indices it sends looked owned twice, or landed outside the holder's pages); with
// another mode it calls other collectives.
void check_same_on_every_node(index global_size, table_mode mode, index page_size, const char* api) {
  const auto r = squall::range_over_nodes(std::array<std::uint64_t, 3>{
      static_cast<std::uint64_t>(global_size), static_cast<std::uint64_t>(mode), static_cast<std::uint64_t>(page_size)});
  const char* const names[] = {"global size", "mode", "page size"};
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (r[i].same()) continue;
    const auto text = [i](std::uint64_t v) {
      if (i == 1) return std::string(static_cast<table_mode>(v) == table_mode::replicated ? "replicated" : "distributed");
      return std::to_string(static_cast<index>(v));
    };
    throw usage_error(std::string(api) + ": the " + names[i] + " differs between nodes (" + text(r[i].lowest) +
                      " on some, " + text(r[i].highest) + " on others); every node must give the same");
  }
}

}  // namespace

translation_table::translation_table(std::unique_ptr<state> s) : s_(std::move(s)) {}
translation_table::translation_table(translation_table&&) noexcept = default;
namespace {
void unregister(const std::unique_ptr<translation_table::state>& s) {
  if (!s || s->mode != table_mode::distributed) return;
  std::lock_guard<std::mutex> lock(registry_mutex);
  registry().erase(s->id);
}
}  // namespace

translation_table& translation_table::operator=(translation_table&& o) noexcept {
  if (this != &o) {
    unregister(s_);
    s_ = std::move(o.s_);
  }
  return *this;
}
translation_table::~translation_table() { unregister(s_); }

translation_table::translation_table(std::span<const index> owned, index global_size, table_mode mode,
                                     index page_size)
    : s_(std::make_unique<state>()) {
  constexpr const char* api = "chaos::translation_table";
  check_same_on_every_node(global_size, mode, page_size, api);
  state& s = *s_;
  s.global_size = global_size;
  s.mode = mode;
  s.page_size = page_size;
  s.nodes = squall::nodes();
  s.me = squall::node();
  s.id = tables_built++;
  s.owned.assign(owned.begin(), owned.end());

  std::string problem;
  if (global_size < 0) problem = "global size " + std::to_string(global_size) + " is negative";
  if (page_size < 1) problem = "page size " + std::to_string(page_size) + " must be at least 1";
  for (index g : owned) {
    if (problem.empty() && (g < 0 || g >= global_size)) {
      problem = "owned global index " + std::to_string(g) + " is outside [0, " + std::to_string(global_size) + ")";
    }
  }
  std::int64_t total = static_cast<std::int64_t>(owned.size());
  allreduce(std::span<const std::int64_t>(&total, 1), std::span<std::int64_t>(&total, 1));
  if (problem.empty() && total != global_size) {
    problem = "the nodes own " + std::to_string(total) + " elements in all, not global_size " +
              std::to_string(global_size);
  }
  detail::agree_or_throw(problem, api);

  const location unset{};
  if (mode == table_mode::replicated) {
    s.entries.assign(static_cast<std::size_t>(global_size), unset);
    // Every node's list, in node order: (owner, global) pairs as the list gives them.
    const std::vector<index> all = allgather(std::span<const index>(s.owned));
    std::vector<std::int64_t> counts(static_cast<std::size_t>(s.nodes), 0);
    counts[s.me] = static_cast<std::int64_t>(owned.size());
    allreduce(std::span<const std::int64_t>(counts), std::span<std::int64_t>(counts));
    std::size_t k = 0;
    for (int p = 0; p < s.nodes; ++p) {
      for (index off = 0; off < counts[p]; ++off, ++k) {
        location& e = s.entries[static_cast<std::size_t>(all[k])];
        if (e.owner >= 0 && problem.empty()) {
          problem = "global index " + std::to_string(all[k]) + " is owned twice (by nodes " + std::to_string(e.owner) +
                    " and " + std::to_string(p) + ")";
        }
        e = {p, off};
      }
    }
  } else {
    const index pages = (global_size + page_size - 1) / page_size;
    const index my_pages = pages / s.nodes + (s.me < pages % s.nodes ? 1 : 0);
    s.entries.assign(static_cast<std::size_t>(my_pages * page_size), unset);
    std::vector<std::vector<index>> out(static_cast<std::size_t>(s.nodes));  // (global, offset) pairs
    for (std::size_t i = 0; i < s.owned.size(); ++i) {
      auto& o = out[static_cast<std::size_t>(s.holder(s.owned[i]))];
      o.push_back(s.owned[i]);
      o.push_back(static_cast<index>(i));
    }
    const auto in = exchange(out);
    for (int p = 0; p < s.nodes; ++p) {
      const auto& pairs = in[static_cast<std::size_t>(p)];
      for (std::size_t i = 0; i + 1 < pairs.size(); i += 2) {
        location& e = s.entries[s.slot(pairs[i])];
        if (e.owner >= 0 && problem.empty()) {
          problem = "global index " + std::to_string(pairs[i]) + " is owned twice (by nodes " +
                    std::to_string(e.owner) + " and " + std::to_string(p) + ")";
        }
        e = {p, pairs[i + 1]};
      }
    }
  }
  if (problem.empty()) problem = check_entries(s.entries, s);
  if (mode == table_mode::distributed && problem.empty()) {
    std::lock_guard<std::mutex> lock(registry_mutex);
    registry()[s.id] = &s;
  }
  try {
    detail::agree_or_throw(problem, api);  // also: every node's pages are filled before anyone looks up
  } catch (...) {
    unregister(s_);  // the destructor does not run for a constructor that throws
    throw;
  }
}

translation_table translation_table::block(index global_size, table_mode mode) {
  // A negative size owns nothing here (sizing the parts from it made a vector of a negative
  // length); the constructor refuses it on every node, also when only this node was given it.
  std::vector<index> owned;
  if (global_size >= 0) {
    const index n = squall::nodes(), me = squall::node();
    const index base = global_size / n, extra = global_size % n;
    const index first = me * base + std::min(me, extra);
    owned.resize(static_cast<std::size_t>(base + (me < extra ? 1 : 0)));
    for (std::size_t i = 0; i < owned.size(); ++i) owned[i] = first + static_cast<index>(i);
  }
  return translation_table(owned, global_size, mode);
}

// Only a table moved from has no state: the constructors always make one.
const translation_table::state& translation_table::checked() const {
  if (!s_) [[unlikely]] detail::used_after_move("chaos::translation_table");
  return *s_;
}

index translation_table::global_size() const { return checked().global_size; }
index translation_table::local_size() const { return static_cast<index>(checked().owned.size()); }
table_mode translation_table::mode() const { return checked().mode; }
std::span<const index> translation_table::owned() const { return checked().owned; }

std::size_t translation_table::memory_bytes() const {
  return checked().entries.capacity() * sizeof(location) + checked().owned.capacity() * sizeof(index);
}

std::vector<location> translation_table::lookup(std::span<const index> globals) const {
  std::vector<location> out(globals.size());
  lookup(globals, out);
  return out;
}

void translation_table::lookup(std::span<const index> globals, std::span<location> out) const {
  constexpr const char* api = "chaos::translation_table::lookup";
  const state& s = checked();
  if (out.size() != globals.size()) throw usage_error(std::string(api) + ": one output per index is needed");
  for (index g : globals) {
    if (g < 0 || g >= s.global_size) bad_global(api, g, s.global_size);
  }
  if (s.mode == table_mode::replicated) {
    for (std::size_t i = 0; i < globals.size(); ++i) out[i] = s.entries[static_cast<std::size_t>(globals[i])];
    detail::count_lookups(globals.size(), 0);
    return;
  }
  // One request per holding node, split only where an answer would exceed a message.
  const std::size_t per_request = std::max<std::size_t>(1, am::max_payload() / sizeof(location));
  pending_lookup p{out.data(), {}, 0};
  std::vector<std::vector<index>> asked(static_cast<std::size_t>(s.nodes));
  std::vector<std::vector<std::size_t>> where(static_cast<std::size_t>(s.nodes));
  for (std::size_t i = 0; i < globals.size(); ++i) {
    const int h = s.holder(globals[i]);
    if (h == s.me) {
      out[i] = s.entries[s.slot(globals[i])];
    } else {
      asked[static_cast<std::size_t>(h)].push_back(globals[i]);
      where[static_cast<std::size_t>(h)].push_back(i);
    }
  }
  struct request {
    int node;
    std::size_t first, count;
  };
  std::vector<request> requests;
  for (int h = 0; h < s.nodes; ++h) {
    const auto& a = asked[static_cast<std::size_t>(h)];
    for (std::size_t first = 0; first < a.size(); first += per_request) {
      const std::size_t count = std::min(per_request, a.size() - first);
      requests.push_back({h, first, count});
      const auto& w = where[static_cast<std::size_t>(h)];
      p.positions.emplace_back(w.begin() + static_cast<std::ptrdiff_t>(first),
                               w.begin() + static_cast<std::ptrdiff_t>(first + count));
    }
  }
  p.outstanding = static_cast<int>(requests.size());
  for (std::size_t r = 0; r < requests.size(); ++r) {
    const auto& q = requests[r];
    am::send<on_lookup>(q.node, s.id, reinterpret_cast<std::uint64_t>(&p), static_cast<std::uint32_t>(r),
                        am::as_payload(asked[static_cast<std::size_t>(q.node)].data() + q.first, q.count));
  }
  detail::count_lookups(globals.size(), requests.size());
  am::wait_until([&] { return p.outstanding == 0; });
}

}  // namespace squall::chaos
