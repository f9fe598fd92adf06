// SPDX-License-Identifier: BSD-3-Clause
#include "memory/page_tables.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.hpp"
#include "memory/deferred_maps.hpp"
#include "memory/uffd_abi.hpp"

namespace squall::memory::detail {
namespace {

std::size_t page_size() {
  static const auto size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

// Nothing here wakes a thread waiting on a fault: on the thread path the fault thread
// wakes it once the whole handler has returned (see thread_path.cpp).
void write_protect_range(int uffd, std::byte* start, std::size_t len, bool on) {
  uffdio_writeprotect w{};
  w.range = {reinterpret_cast<__u64>(start), len};
  w.mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : UFFDIO_WRITEPROTECT_MODE_DONTWAKE;
  while (::ioctl(uffd, UFFDIO_WRITEPROTECT, &w) != 0) {
    if (errno != EAGAIN) {
      fatal_in_signal("UFFDIO_WRITEPROTECT at %p failed: %s", static_cast<void*>(start), std::strerror(errno));
    }
  }
}

// Pages of blocks [b, b + count) were never written: put zero pages in the page cache to map.
void populate(const segment_state& s, block_index b, std::size_t count) {
  if (::fallocate(s.memfd, 0, static_cast<off_t>(s.offset_of(b)), static_cast<off_t>(count * s.block_size)) != 0) {
    fatal_in_signal("cannot allocate memory for block %zu of the segment at %p: %s", b,
          static_cast<void*>(s.app), std::strerror(errno));
  }
}

}  // namespace

const char* tag_name(tag t) {
  switch (t) {
    case tag::invalid:
      return "Invalid";
    case tag::read_only:
      return "ReadOnly";
    case tag::read_write:
      break;
  }
  return "ReadWrite";
}

// fallocate allocates the pages; shmem zeroes each at its first use, the mapping. (Populating
// the protocol view as well, MADV_POPULATE_WRITE or _READ, zeroes them here, outside the node
// lock, but maps every page twice: PARMACS RADIX on one node of 2 workers took 1.31x
// pthreads' sort time that way, 1.11x this; SPLASH-2 RADIX on one worker, with _READ, 1.40x
// the time of this, 64 against 46 ms in 5 alternated runs.)
void fill_pages(const segment_state& s, block_index b, std::size_t count) {
  (void)::fallocate(s.memfd, 0, static_cast<off_t>(s.offset_of(b)), static_cast<off_t>(count * s.block_size));
}

void map_block(int uffd, const segment_state& s, block_index b, bool write_protected) {
  map_blocks(uffd, s, b, 1, write_protected);
}

void map_blocks(int uffd, const segment_state& s, block_index b, std::size_t count, bool write_protected) {
  std::byte* cursor = s.app_block(b);
  std::byte* const end = cursor + count * s.block_size;
  bool populated = false;
  while (cursor < end) {
    uffdio_continue c{};
    c.range = {reinterpret_cast<__u64>(cursor), static_cast<__u64>(end - cursor)};
    c.mode = UFFDIO_CONTINUE_MODE_DONTWAKE | (write_protected ? UFFDIO_CONTINUE_MODE_WP : 0);
    if (::ioctl(uffd, UFFDIO_CONTINUE, &c) == 0) return;
    const int err = errno;
    if (c.mapped > 0) cursor += c.mapped;  // partly done; `err` concerns the page at cursor
    if (err == EAGAIN) continue;
    if (err == EEXIST) {  // already mapped (a racing fault, or a lazy first touch)
      write_protect_range(uffd, cursor, page_size(), write_protected);
      cursor += page_size();
    } else if (err == EFAULT && !populated) {
      const block_index at = b + static_cast<std::size_t>(cursor - s.app_block(b)) / s.block_size;
      populate(s, at, count - (at - b));
      populated = true;
    } else {
      fatal_in_signal("UFFDIO_CONTINUE at %p (blocks %zu to %zu) failed: %s", static_cast<void*>(cursor), b,
            b + count - 1, std::strerror(err));
    }
  }
}

void write_protect_block(int uffd, const segment_state& s, block_index b, bool on) {
  write_protect_range(uffd, s.app_block(b), s.block_size, on);
}

void unmap_block(const segment_state& s, block_index b) {
  if (::madvise(s.app_block(b), s.block_size, MADV_DONTNEED) != 0) {
    fatal_in_signal("madvise(MADV_DONTNEED) on block %zu at %p failed: %s", b,
          static_cast<void*>(s.app_block(b)), std::strerror(errno));
  }
}

void change_tag(int uffd, segment_state& s, block_index b, tag from, tag to) {
  if (to < from) wait_for_deferred_maps(s);  // a late mapping must not undo the lowering
  if (to == tag::invalid) {
    if (from != tag::invalid) unmap_block(s, b);
  } else if (from == tag::invalid) {
    map_block(uffd, s, b, to == tag::read_only);
  } else if (from != to) {
    write_protect_block(uffd, s, b, to == tag::read_only);
  }
  s.tags[b].store(to, std::memory_order_release);
}

}  // namespace squall::memory::detail
