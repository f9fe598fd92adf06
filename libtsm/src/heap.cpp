// SPDX-License-Identifier: BSD-3-Clause
// The shared heap: TSM segments made collectively by tsm::init, from which any node
// allocates at any time (tsm::malloc, G_MALLOC) without the others taking part. Node 0 keeps
// the free list; a node asks it by message (am::call) and gets an offset back, valid on every
// node since the segment sits at the same address everywhere.
//
// The free list is a fixed array with no allocation: node 0 may run the handler inside a
// fault handler on the SIGBUS path. Allocations are rounded to 64 bytes, and the bytes of
// those of a block or more start on a block boundary (no false sharing with their
// neighbours). Each allocation keeps its size in the 64 bytes before it.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include <squall/am.hpp>
#include <squall/collectives.hpp>
#include <squall/error.hpp>
#include <squall/runtime.hpp>
#include <squall/tsm.hpp>

#include <squall/settings.hpp>
#include "protocol/registry.hpp"
#include "segment_size.hpp"

namespace squall::tsm {
namespace {

constexpr std::uint64_t no_space = ~std::uint64_t{0};
constexpr std::uint64_t granule = 64;
constexpr std::uint64_t header = granule;  // the allocation's size, before its bytes

struct range {
  std::uint64_t at, size;
};

// Node 0's view of the heap's free space, lowest offset first.
struct free_list {
  static constexpr std::size_t capacity = 16384;
  std::array<range, capacity> ranges;
  std::size_t count = 0;
  std::uint64_t block = 4096;

  // `size` bytes including the header; returns where the header goes.
  std::uint64_t take(std::uint64_t size) {
    const std::uint64_t align = size - header >= block ? block : granule;
    for (std::size_t i = 0; i < count; ++i) {
      range& r = ranges[i];
      const std::uint64_t start = (r.at + header + align - 1) / align * align - header;
      if (start + size > r.at + r.size) continue;
      const range before{r.at, start - r.at}, after{start + size, r.at + r.size - start - size};
      // What is left on either side replaces r in place; only a split needs a new slot.
      if (before.size != 0 && after.size != 0) {
        if (count == capacity) continue;  // no slot for the split: try another range
        r = before;
        insert(after);
      } else if (before.size != 0) {
        r = before;
      } else if (after.size != 0) {
        r = after;
      } else {
        erase(i);
      }
      return start;
    }
    return no_space;
  }
  void give_back(std::uint64_t at, std::uint64_t size) {
    std::size_t i = 0;
    while (i < count && ranges[i].at < at) ++i;
    const bool joins_before = i > 0 && ranges[i - 1].at + ranges[i - 1].size == at;
    const bool joins_after = i < count && at + size == ranges[i].at;
    if (joins_before && joins_after) {
      ranges[i - 1].size += size + ranges[i].size;
      erase(i);
    } else if (joins_before) {
      ranges[i - 1].size += size;
    } else if (joins_after) {
      ranges[i].at = at;
      ranges[i].size += size;
    } else {
      insert({at, size});  // a full list loses the range: the heap only shrinks
    }
  }
  bool insert(range r) {
    if (count == capacity) return false;
    std::size_t i = 0;
    while (i < count && ranges[i].at < r.at) ++i;
    std::copy_backward(ranges.begin() + static_cast<std::ptrdiff_t>(i), ranges.begin() + static_cast<std::ptrdiff_t>(count),
                       ranges.begin() + static_cast<std::ptrdiff_t>(count + 1));
    ranges[i] = r;
    ++count;
    return true;
  }
  void erase(std::size_t i) {
    std::copy(ranges.begin() + static_cast<std::ptrdiff_t>(i + 1), ranges.begin() + static_cast<std::ptrdiff_t>(count),
              ranges.begin() + static_cast<std::ptrdiff_t>(i));
    --count;
  }
};

// An arena is a range of the heap with its own free list at node 0: arena 0 is the heap
// (homes as tsm::init's options say); arena 1 + h is node h's part of the placed heap.
struct arena {
  std::byte* base = nullptr;
  std::uint64_t size = 0;
  free_list* free = nullptr;  // node 0 only
};

struct heap_state {
  std::byte* base = nullptr;    // the heap
  std::uint64_t size = 0;
  std::byte* placed = nullptr;  // the placed heap: `nodes` parts of part_size, part h homed at h
  std::uint64_t part_size = 0;
  std::vector<arena> arenas;    // made at init, never resized: handlers read it
};
heap_state& heap = *new heap_state;  // never destroyed: a handler may still run during exit

std::uint64_t rounded(std::uint64_t bytes) { return (std::max<std::uint64_t>(bytes, 1) + granule - 1) / granule * granule; }

// Node 0's handlers.
std::uint64_t allocate_msg(am::token&, std::uint32_t arena, std::uint64_t bytes) {
  return heap.arenas[arena].free->take(rounded(bytes));
}
void free_msg(am::token&, std::uint32_t arena, std::uint64_t at, std::uint64_t bytes) {
  heap.arenas[arena].free->give_back(at, rounded(bytes));
}

[[noreturn]] void no_room(std::uint32_t index, std::size_t bytes) {
  throw usage_error("tsm::malloc: no room for " + std::to_string(bytes) + " bytes in the shared heap" +
                    (index == 0 ? "" : "'s part homed at node " + std::to_string(index - 1)) + " of " +
                    std::to_string(heap.arenas[index].size >> 20) + " MiB (SQUALL_TSM_HEAP_MIB)");
}

void* allocate_in(std::uint32_t index, std::size_t bytes) {
  squall::detail::require_running("tsm::malloc");
  if (heap.base == nullptr) throw usage_error("tsm::malloc called before tsm::init");
  const arena& a = heap.arenas[index];
  // Checked before rounding, which would wrap for sizes near the largest and give a block
  // of a header only, overlapping the next allocation.
  if (bytes > a.size - header) no_room(index, bytes);
  const std::uint64_t want = rounded(bytes) + header;
  const std::uint64_t at = am::call<allocate_msg>(0, index, want);
  if (at == no_space) no_room(index, bytes);
  *reinterpret_cast<std::uint64_t*>(a.base + at) = want;
  return a.base + at + header;
}

std::uint64_t heap_bytes_from_env() {
  return static_cast<std::uint64_t>(settings::number("SQUALL_TSM_HEAP_MIB", 1024, 1, std::int64_t{1} << 20)) << 20;
}

}  // namespace

void init(const options& opt) {
  squall::detail::require_running("tsm::init");
  if (heap.base != nullptr) throw usage_error("tsm::init called twice");
  const auto n = static_cast<std::uint64_t>(squall::nodes());
  const std::uint64_t size = heap_bytes_from_env();
  detail::check_block_size(opt.block_size, "tsm::init");
  if (opt.protocol != "stache") (void)detail::make_named(opt.protocol, "tsm::init");  // a known name, checked first
  const std::uint64_t part_size = std::max<std::uint64_t>(size / n / opt.block_size, 1) * opt.block_size;
  // The size comes from each node's environment: nodes started with different values (one
  // host's environment not another's) are told so, not that "memory::allocate is collective".
  const value_range sizes = range_over_nodes(std::array<std::uint64_t, 1>{size})[0];
  if (!sizes.same()) {
    throw usage_error("tsm::init: SQUALL_TSM_HEAP_MIB differs between nodes (from " +
                      std::to_string(sizes.lowest >> 20) + " to " + std::to_string(sizes.highest >> 20) +
                      " MiB; this node: " + std::to_string(size >> 20) + "); set it alike on every node");
  }
  // Both heaps at once, before either is built.
  detail::check_segment_size(size + part_size * n, opt.block_size, true,
                             "tsm::init: the shared heap and the placed heap of " + std::to_string(size >> 20) +
                                 " MiB each (SQUALL_TSM_HEAP_MIB)");
  // Both segments, or neither: the heap is published only once the placed heap is made too.
  // A node whose range had room for the first only (SQUALL_SEGMENT_SPACE_GIB) gave up here
  // with the first segment set and none of the arenas, so tsm::initialized() said true, a
  // second tsm::init was refused, and tsm::malloc read past an empty arena table.
  auto* base = static_cast<std::byte*>(alloc_bytes(size, opt));
  options placed_options = opt;
  placed_options.homes = memory::home_policy::partition();
  std::byte* placed = nullptr;
  try {
    placed = static_cast<std::byte*>(alloc_bytes(part_size * n, placed_options));
  } catch (...) {
    tsm::free(base);  // collective: the nodes' ranges are alike, so every node failed here
    throw;
  }
  heap.size = size;
  heap.base = base;
  heap.part_size = part_size;
  heap.placed = placed;
  heap.arenas.resize(1 + n);
  heap.arenas[0] = {heap.base, heap.size, nullptr};
  for (std::uint64_t h = 0; h < n; ++h) heap.arenas[1 + h] = {heap.placed + h * heap.part_size, heap.part_size, nullptr};
  if (squall::node() == 0) {
    for (arena& a : heap.arenas) {
      a.free = new free_list;
      a.free->block = opt.block_size;
      a.free->insert({0, a.size});
    }
  }
  squall::barrier();  // node 0's free lists are ready before anyone asks
}

bool initialized() { return heap.base != nullptr; }

void* malloc(std::size_t bytes) { return allocate_in(0, bytes); }

void* malloc(std::size_t bytes, int home) {
  squall::detail::require_running("tsm::malloc");
  if (home < 0 || home >= squall::nodes()) {
    throw usage_error("tsm::malloc: home node " + std::to_string(home) + " does not exist (nodes are 0.." +
                      std::to_string(squall::nodes() - 1) + ")");
  }
  return allocate_in(static_cast<std::uint32_t>(1 + home), bytes);
}

void heap_free(void* p) {
  if (p == nullptr) return;  // as free(NULL)
  squall::detail::require_running("tsm::heap_free");
  auto* b = static_cast<std::byte*>(p);
  std::uint32_t index = 0;
  while (index < heap.arenas.size() &&
         !(b >= heap.arenas[index].base + header && b < heap.arenas[index].base + heap.arenas[index].size)) {
    ++index;
  }
  if (index == heap.arenas.size()) throw usage_error("tsm::heap_free: the address is not in the shared heap");
  const arena& a = heap.arenas[index];
  const std::uint64_t at = static_cast<std::uint64_t>(b - a.base) - header;
  const std::uint64_t size = *reinterpret_cast<std::uint64_t*>(a.base + at);
  if (size < header || size > a.size - at) {
    throw usage_error("tsm::heap_free: the address was not returned by tsm::malloc, or was freed already");
  }
  *reinterpret_cast<std::uint64_t*>(a.base + at) = 0;  // a second free of it is caught above
  am::send<free_msg>(0, index, at, size);
}

}  // namespace squall::tsm
