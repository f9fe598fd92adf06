// SPDX-License-Identifier: BSD-3-Clause
#include "memory/shared_access.hpp"

#include <unistd.h>

#include <algorithm>

#include <squall/error.hpp>

#include "common/log.hpp"
#include "memory/fault_service.hpp"
#include "memory/layer.hpp"
#include "memory/page_tables.hpp"

namespace squall::memory::detail {
namespace {

// Calls f(segment, block) for every block of a live segment within [start, start+len).
template <class F>
void for_each_block(std::uintptr_t start, std::size_t len, F&& f) {
  const auto* cursor = reinterpret_cast<const std::byte*>(start);
  const auto* end = cursor + len;
  while (cursor < end) {
    segment_state* s = find_segment(cursor);
    if (s == nullptr) {  // a gap between segments: go on a page at a time
      static const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
      cursor += page - reinterpret_cast<std::uintptr_t>(cursor) % page;
      continue;
    }
    const std::byte* stop = std::min<const std::byte*>(end, s->app + s->bytes);
    for (block_index b = s->block_of(cursor); cursor < stop; ++b, cursor = s->app_block(b)) f(*s, b);
    cursor = stop;
  }
}

bool touches_segments(std::uintptr_t start, std::size_t len) {
  if (len == 0) return false;
  const layer* l = running_layer();
  if (l == nullptr) return false;
  const std::uintptr_t lo = l->space.base(), hi = lo + l->space.bytes();
  return start < hi && start + len > lo;
}

}  // namespace

bool prepare_access(std::uintptr_t start, std::size_t len, bool write) {
  if (!touches_segments(start, len)) return false;
  for_each_block(start, len, [&](segment_state& s, block_index b) {
    if (!allows(s.tags[b].load(std::memory_order_acquire), write)) serve_fault(s, b, write);
  });
  return true;
}

void repair_access(std::uintptr_t start, std::size_t len, bool write) {
  if (!touches_segments(start, len)) return;
  for_each_block(start, len, [&](segment_state& s, block_index b) { serve_fault(s, b, write); });
}

bool in_segment_range(const std::byte* start, std::size_t len) {
  return touches_segments(reinterpret_cast<std::uintptr_t>(start), len);
}

const std::byte* readable_source(const std::byte* start, std::size_t len) {
  if (!prepare_access(reinterpret_cast<std::uintptr_t>(start), len, false)) return start;
  const segment_state* s = find_segment(start);
  if (s == nullptr || !s->holds(start + len - 1)) {
    throw usage_error(format("a message payload at %p (%zu bytes) lies in the segment range but not "
                             "within one segment",
                             static_cast<const void*>(start), len));
  }
  return s->proto + (start - s->app);
}

}  // namespace squall::memory::detail
