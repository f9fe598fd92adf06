// SPDX-License-Identifier: BSD-3-Clause
// What this node knows about each segment, in a fixed table of slots that the fault path
// reads without locks (a slot is published by setting `live` last and retired by clearing
// it first). A handle names a slot and the generation it was allocated in.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <squall/memory.hpp>

namespace squall::memory::detail {

enum class home_kind { round_robin, partition, function };

struct segment_state {
  std::atomic<bool> live{false};
  // memory::free has begun here: the thread path serves no more reported faults on it.
  std::atomic<bool> retiring{false};
  std::uint32_t index = 0;  // this slot's number
  std::uint32_t generation = 0;
  std::byte* app = nullptr;    // application view, at the global address
  std::size_t colour = 0;      // bytes of the segment range reserved before `app` (segment.cpp)
  std::byte* proto = nullptr;  // protocol view, anywhere; never faults
  std::size_t bytes = 0, block_size = 0, blocks = 0;
  unsigned block_shift = 0;
  int memfd = -1;
  // The userfaultfd of the segment's blocks, and of those in `recorded` (ascending ranges
  // whose stores to ReadOnly blocks the kernel records: write_recording.hpp).
  int uffd = -1, recording_uffd = -1;
  std::vector<block_range> recorded;
  // By node: that node's memory of the segment, mapped read-only here, where it is on this
  // host (home_views.hpp); null elsewhere.
  std::vector<const std::byte*> home_views;
  // Reads from homes reached over a network transport that offers them (home_views.hpp): this
  // node's registration of its protocol view, and by node the key and the address of that
  // node's protocol view to read (0 where there is none).
  std::uintptr_t read_registration = 0;
  std::vector<std::uintptr_t> read_keys, read_bases;
  // Home words (segment_options::home_words, segment::home_word): by node, that node's array of
  // one word per block of the segment, mapped read-write here (this node's own, and those of
  // the other nodes of this host); null where there is none. `words_memfd` holds this node's
  // until every peer has mapped them (home_views_opened closes it).
  int words_memfd = -1;
  std::vector<std::atomic<std::uint64_t>*> home_words;
  std::size_t fill_blocks = 0;  // segment_options::fill_around_faults, in blocks (0, 1: off)
  // Runs whose tags were raised in a fault handler and whose pages are still to be mapped,
  // after it (deferred_maps.hpp): a lowering of a tag waits for them.
  std::atomic<int> maps_in_flight{0};
  bool adopted = false;  // memory::adopt: the range returns to private memory when freed
  std::unique_ptr<std::atomic<tag>[]> tags;
  home_kind homes = home_kind::round_robin;
  int nodes = 1;
  std::size_t blocks_per_node = 1;  // partition
  std::vector<int> home_table;      // function
  std::atomic<protocol*> handler{nullptr};

  bool holds(const void* p) const {
    const auto* b = static_cast<const std::byte*>(p);
    return b >= app && b < app + bytes;
  }
  block_index block_of(const void* p) const {
    return static_cast<block_index>(static_cast<const std::byte*>(p) - app) >> block_shift;
  }
  std::byte* app_block(block_index b) const { return app + (b << block_shift); }
  std::byte* proto_block(block_index b) const { return proto + (b << block_shift); }
  std::size_t offset_of(block_index b) const { return b << block_shift; }
  bool records(block_index b) const {
    for (const block_range& r : recorded) {
      if (b >= r.first && b < r.end) return true;
    }
    return false;
  }
  int uffd_of(block_index b) const { return records(b) ? recording_uffd : uffd; }
  int home(block_index b) const {
    switch (homes) {
      case home_kind::round_robin:
        return static_cast<int>(b % static_cast<std::size_t>(nodes));
      case home_kind::partition:
        return static_cast<int>(b / blocks_per_node);
      case home_kind::function:
        break;
    }
    return home_table[b];
  }
};

constexpr std::uint32_t max_segments = 1024;

// Slot i (1..max_segments-1; slot 0 is never used, so a default handle is null).
segment_state& slot(std::uint32_t i);
// A slot that is not live, or 0 if all are.
std::uint32_t unused_slot();
// Marks slot i live; raises the number of slots the fault path scans.
void publish(std::uint32_t i);

// The live segment holding p, or nullptr. Safe in a signal handler.
segment_state* find_segment(const void* p);

}  // namespace squall::memory::detail
