// SPDX-License-Identifier: BSD-3-Clause
#include "binding.hpp"

#include <algorithm>
#include <string>

#include <squall/error.hpp>
#include <squall/runtime.hpp>

#include "../fail.hpp"

namespace squall::tsm::detail {

binding::binding(block_index blocks, tsm::protocol& whole) { ranges_.push_back({0, blocks, &whole, false}); }

binding::range& binding::at(block_index b) {
  if (ranges_.size() == 1) return ranges_.front();
  return *std::prev(std::upper_bound(ranges_.begin(), ranges_.end(), b, [](block_index x, const range& r) { return x < r.first; }));
}
const binding::range& binding::at(block_index b) const { return const_cast<binding*>(this)->at(b); }

void binding::check_rebind(block_index first, block_index end, const char* api) const {
  const block_index blocks = ranges_.back().end;
  if (first >= end || end > blocks) {
    throw usage_error(std::string(api) + ": blocks " + std::to_string(first) + " to " + std::to_string(end) +
                      " are not a range of the segment's " + std::to_string(blocks) + " blocks");
  }
  for (const range& r : ranges_) {
    if (r.end > first && r.first < end && r.used) {
      throw usage_error(std::string(api) + ": blocks " + std::to_string(first) + " to " + std::to_string(end) +
                        " were used under protocol '" + std::string(r.p->name()) +
                        "' already; bind a range before any node touches it");
    }
  }
}

void binding::rebind(block_index first, block_index end, tsm::protocol& p, const char* api) {
  check_rebind(first, end, api);
  std::vector<range> next;
  bool placed = false;
  for (const range& r : ranges_) {
    if (r.end <= first || r.first >= end) {
      next.push_back(r);
      continue;
    }
    if (r.first < first) next.push_back({r.first, first, r.p, false});
    if (!placed) next.push_back({first, end, &p, false});
    placed = true;
    if (r.end > end) next.push_back({end, r.end, r.p, false});
  }
  ranges_ = std::move(next);
}

namespace {

// A fault after squall::finalize: the protocol's handler runs (it may raise the tag without
// the runtime), but one that needs the runtime (a message, the node's number) throws the
// usage_error of that call. The node then ended with "the protocol's read fault handler threw
// ...: squall::node called after squall::finalize (a fault handler cannot throw ...)", naming a
// runtime call the program never made and blaming the protocol: the access is the program's
// mistake, said as stache says it.
void fault_after_finalize(tsm::protocol& p, segment s, block_index b, bool write) {
  try {
    if (write) {
      p.write_fault(s, b);
    } else {
      p.read_fault(s, b);
    }
  } catch (const std::exception& e) {
    const std::string_view name = p.name();
    fail("a %s of block %zu of the TSM segment at %p, run by protocol '%.*s', after squall::finalize: the "
         "protocol cannot serve it once the runtime has stopped (%s); finish with TSM and XSM memory (or copy "
         "what is needed to private memory) before finalize",
         write ? "write" : "read", b, static_cast<void*>(s.base()), static_cast<int>(name.size()), name.data(),
         e.what());
  }
}

}  // namespace

void binding::read_fault(segment s, block_index b) {
  range& r = at(b);
  r.used = true;
  if (!squall::initialized()) [[unlikely]] return fault_after_finalize(*r.p, s, b, false);
  r.p->read_fault(s, b);
}

void binding::write_fault(segment s, block_index b) {
  range& r = at(b);
  r.used = true;
  if (!squall::initialized()) [[unlikely]] return fault_after_finalize(*r.p, s, b, true);
  r.p->write_fault(s, b);
}

binding& binding_of(segment s, const char* api) {
  auto* b = dynamic_cast<binding*>(s.bound_protocol());
  if (b == nullptr) throw usage_error(std::string(api) + ": the address is not in TSM memory");
  return *b;
}

}  // namespace squall::tsm::detail
