// SPDX-License-Identifier: BSD-3-Clause
// tsm::fetch: read copies of many blocks asked for together (stache::fetch_ahead), up to
// stache::fetch_window at a time, so that their round trips overlap.
#include <squall/am.hpp>
#include <squall/error.hpp>
#include <squall/runtime.hpp>
#include <squall/tsm.hpp>

#include <string>
#include <vector>

#include "protocol/binding.hpp"
#include "stache.hpp"

namespace squall::tsm {
namespace {

// A range's blocks in one segment, checked.
struct block_run {
  memory::segment s;
  detail::binding* binding;
  block_index first, end;
};

// Where a fetch has got to: the next block to ask for.
struct fetch_state {
  const std::vector<block_run>& runs;
  std::size_t run;
  block_index next;
};

bool window_open() { return detail::stache::fetches_in_flight() < detail::stache::fetch_window; }

// Under the node lock: requests for the next blocks that stache runs and this node cannot
// read, until the window is full.
void ask(void* state) {
  auto& f = *static_cast<fetch_state*>(state);
  while (f.run < f.runs.size() && window_open()) {
    const block_run& r = f.runs[f.run];
    if (f.next < r.end) {
      if (auto* st = dynamic_cast<detail::stache*>(&r.binding->protocol_for(f.next))) {
        r.binding->mark_used(f.next);
        st->fetch_ahead(r.s, f.next);
      }
      ++f.next;
    } else if (++f.run < f.runs.size()) {
      f.next = f.runs[f.run].first;
    }
  }
}

}  // namespace

void fetch(std::span<const byte_range> ranges) {
  squall::detail::require_running("tsm::fetch");
  // Checked before anything is asked, outside the node lock (a usage_error allocates).
  std::vector<block_run> runs;
  for (const byte_range& r : ranges) {
    if (r.bytes == 0) continue;
    const memory::segment s = memory::segment_of(r.address);
    detail::binding& binding = detail::binding_of(s, "tsm::fetch");
    const auto* first = static_cast<const std::byte*>(r.address);
    if (r.bytes > static_cast<std::size_t>(s.base() + s.size() - first)) {
      throw usage_error("tsm::fetch: a range of " + std::to_string(r.bytes) + " bytes runs past the end of its segment");
    }
    runs.push_back({s, &binding, s.block_of(first), s.block_of(first + r.bytes - 1) + 1});
  }
  if (runs.empty()) return;
  detail::stache::let_go();  // the program has moved on from its last fault, as at a barrier
  fetch_state f{runs, 0, runs[0].first};
  for (;;) {
    am::run_locked(ask, &f);
    if (f.run == runs.size()) break;
    am::wait_until([] { return window_open(); });
  }
  am::wait_until([] { return detail::stache::fetches_in_flight() == 0; });
}

}  // namespace squall::tsm
