// SPDX-License-Identifier: BSD-3-Clause
#include "memory/write_recording.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/config.hpp"
#include "common/log.hpp"
#include "memory/counters.hpp"
#include "memory/layer.hpp"
#include "memory/page_tables.hpp"
#include "memory/uffd_abi.hpp"
#include "memory/uffd_device.hpp"

namespace squall::memory::detail {
namespace {

// PAGEMAP_SCAN from `start` to `end` (page-aligned) of pages written since protected,
// protecting them again; `visit(first_page, end_page)` for each run found.
template <class Visit>
void scan_written_pages(int pagemap, std::byte* start, std::byte* end, Visit visit) {
  abi::page_region runs[64];
  auto cursor = reinterpret_cast<std::uint64_t>(start);
  const auto stop = reinterpret_cast<std::uint64_t>(end);
  while (cursor < stop) {
    abi::pm_scan_arg a{};
    a.size = sizeof a;
    a.flags = abi::scan_wp_matching | abi::scan_check_wp_async;
    a.start = cursor;
    a.end = stop;
    a.vec = reinterpret_cast<std::uint64_t>(runs);
    a.vec_len = std::size(runs);
    a.category_mask = abi::page_is_written;
    a.return_mask = abi::page_is_written;
    const long found = ::ioctl(pagemap, abi::pagemap_scan, &a);
    if (found < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      fatal_in_signal("PAGEMAP_SCAN of %p..%p failed: %s", reinterpret_cast<void*>(cursor), static_cast<void*>(end),
                      std::strerror(errno));
    }
    count(write_scans);
    for (long i = 0; i < found; ++i) visit(runs[i].start, runs[i].end);
    cursor = a.walk_end;
  }
}

// Whether PAGEMAP_SCAN answers here: a look (changing nothing) at the page holding `run`.
bool pagemap_scan_answers(int pagemap) {
  abi::page_region run{};
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  abi::pm_scan_arg a{};
  a.size = sizeof a;
  a.start = reinterpret_cast<std::uint64_t>(&run) & ~(page - 1);
  a.end = a.start + page;
  a.vec = reinterpret_cast<std::uint64_t>(&run);
  a.vec_len = 1;
  a.category_mask = abi::page_is_written;
  a.return_mask = abi::page_is_written;
  return ::ioctl(pagemap, abi::pagemap_scan, &a) >= 0;
}

}  // namespace

write_recorder open_write_recorder(bool sigbus_path) {
  write_recorder r;
  if (!sigbus_path || !env_bool("SQUALL_RECORD_WRITES", true)) return r;
  const int pagemap = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (pagemap < 0) return r;
  if (!pagemap_scan_answers(pagemap)) {
    ::close(pagemap);
    return r;
  }
  const userfaultfd u = open_recording_userfaultfd();
  if (u.fd < 0) {
    ::close(pagemap);
    return r;
  }
  r.uffd = u.fd;
  r.pagemap = pagemap;
  return r;
}

// Three passes, none allocating: the kernel's list of written pages of the recorded ranges
// (turned into blocks, ascending), then the ReadWrite blocks merged in from the back, then
// every listed block lowered to ReadOnly.
std::size_t take_written(segment_state& s, block_index first, block_index end, block_index* out) {
  std::size_t found = 0;
  for (const block_range& r : s.recorded) {
    const block_index from = std::max(first, r.first), to = std::min(end, r.end);
    if (from >= to) continue;
    scan_written_pages(running_layer()->recorder.pagemap, s.app_block(from), s.app_block(to),
                       [&](std::uint64_t start, std::uint64_t stop) {
                         for (block_index b = s.block_of(reinterpret_cast<void*>(start));
                              b <= s.block_of(reinterpret_cast<void*>(stop - 1)); ++b) {
                           if (found > 0 && out[found - 1] >= b) continue;  // a block of several pages
                           // The kernel counts a page with no PTE as written (nothing protects
                           // it); an Invalid block's stores fault instead, so none was written.
                           const tag t = s.tags[b].load(std::memory_order_relaxed);
                           if (t == tag::invalid) continue;
                           out[found++] = b;
                           if (t == tag::read_only) count(writes_recorded);
                         }
                       });
  }
  std::size_t extra = 0;  // ReadWrite blocks the scan did not list (untouched, or not recorded)
  for (std::size_t b = first, i = 0; b < end; ++b) {
    while (i < found && out[i] < b) ++i;
    if (s.tags[b].load(std::memory_order_relaxed) == tag::read_write && (i == found || out[i] != b)) ++extra;
  }
  if (extra > 0) {
    std::size_t put = found + extra, next = found;  // next: one past the scan's entries still unread
    for (block_index b = end; b-- > first && put > next;) {
      const bool scanned = next > 0 && out[next - 1] == b;
      if (scanned) --next;
      if (scanned || s.tags[b].load(std::memory_order_relaxed) == tag::read_write) out[--put] = b;
    }
    found += extra;
  }
  for (std::size_t i = 0; i < found; ++i) {
    const block_index b = out[i];
    const tag t = s.tags[b].load(std::memory_order_relaxed);
    if (t == tag::read_write) change_tag(s.uffd_of(b), s, b, t, tag::read_only);
  }
  return found;
}

}  // namespace squall::memory::detail
