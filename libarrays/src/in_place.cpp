// SPDX-License-Identifier: BSD-3-Clause
#include "in_place.hpp"

#include <squall/error.hpp>
#include <squall/runtime.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace squall::arrays::detail {
namespace {

thread_local std::pmr::memory_resource* constructing = nullptr;

// Every access the tags forbid is a pointer into an element that is not on this node.
// Runs in a fault handler (possibly in signal context): no allocation, no stdio.
struct stale_pointer_guard : memory::protocol {
  void read_fault(memory::segment, memory::block_index) override { stale(); }
  void write_fault(memory::segment, memory::block_index) override { stale(); }
  [[noreturn]] static void stale() {
    static const char text[] =
        "squall: libarrays: an access to the slot of an element that is not on this node (a pointer kept "
        "into an element after it migrated away or was deleted); exiting\n";
    [[maybe_unused]] const auto n = ::write(2, text, sizeof text - 1);
    std::_Exit(70);
  }
} guard;

std::size_t round_up(std::size_t x, std::size_t to) { return (x + to - 1) / to * to; }

}  // namespace

std::pmr::memory_resource* constructing_heap() {
  return constructing != nullptr ? constructing : std::pmr::new_delete_resource();
}

void* slot_arena::do_allocate(std::size_t bytes, std::size_t align) {
  std::size_t at = round_up(used_, align);
  if (at + bytes > capacity_) {
    throw squall::usage_error("libarrays: an element's heap outgrew its slot (" + std::to_string(capacity_) +
                              " bytes of arena); create the array with larger in_place_options::slot_bytes");
  }
  used_ = at + bytes;
  return begin_ + at;
}

slot_store::slot_store(const element_ops& ops, const in_place_options& options) : ops_(ops) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  object_offset_ = round_up(sizeof(slot_arena), ops.align);
  if (options.slot_bytes < object_offset_ + ops.size || options.slots_per_node == 0) {
    throw squall::usage_error("libarrays: in_place_options: a slot of " + std::to_string(options.slot_bytes) +
                              " bytes cannot hold an element of " + std::to_string(ops.size));
  }
  slot_bytes_ = round_up(options.slot_bytes, page);
  per_node_ = options.slots_per_node;
  blocks_per_slot_ = slot_bytes_ / page;
  const std::size_t slots = per_node_ * static_cast<std::size_t>(squall::nodes());
  if (slots > UINT32_MAX) throw squall::usage_error("libarrays: in_place_options: too many slots");
  seg_ = memory::allocate(slots * slot_bytes_,
                          {.block_size = page, .homes = memory::home_policy::partition(), .handler = &guard,
                           .initial = memory::tag::invalid});
  const std::size_t first = per_node_ * static_cast<std::size_t>(squall::node());
  for (std::size_t i = per_node_; i-- > 0;) free_.push_back(static_cast<std::uint32_t>(first + i));
}

// Only array::destroy() destroys a store (the runtime itself is never destroyed), on every
// node once the job is quiescent and the elements deleted: the segment's collective free.
// Kept, it counted against the substrate's 1023 live segments: the 1023rd in-place array
// created, even with all the others destroyed, failed.
slot_store::~slot_store() { memory::free(seg_); }

element_base* slot_store::construct(std::uint32_t& slot_out) {
  if (free_.empty()) {
    throw squall::usage_error("libarrays: node " + std::to_string(squall::node()) + " created more than " +
                              std::to_string(per_node_) +
                              " elements of an in-place array; give in_place_options::slots_per_node more");
  }
  const std::uint32_t slot = free_.back();
  free_.pop_back();
  seg_.set_tags(first_block(slot), first_block(slot) + blocks_per_slot_, memory::tag::read_write);
  std::byte* p = address(slot);
  auto* arena = new (p) slot_arena(p + object_offset_ + ops_.size, slot_bytes_ - object_offset_ - ops_.size);
  constructing = arena;
  element_base* e = nullptr;
  try {
    e = ops_.construct_at(p + object_offset_);
  } catch (...) {
    constructing = nullptr;
    throw;
  }
  constructing = nullptr;
  slot_out = slot;
  return e;
}

element_base* slot_store::object(std::uint32_t slot) const { return ops_.object_at(address(slot) + object_offset_); }

std::string slot_store::leave(std::uint32_t slot) {
  const auto* arena = reinterpret_cast<const slot_arena*>(address(slot));
  const auto used = static_cast<std::size_t>(arena->end_used() - address(slot));
  std::string bytes(reinterpret_cast<const char*>(address(slot)), used);
  for (std::size_t b = 0; b < blocks_per_slot_; ++b) seg_.set_tag(first_block(slot) + b, memory::tag::invalid);
  return bytes;
}

void slot_store::arrive(std::uint32_t slot, std::string_view bytes) {
  if (bytes.size() > slot_bytes_) throw squall::usage_error("libarrays: an in-place element arrived with more bytes than its slot");
  const std::size_t block = slot_bytes_ / blocks_per_slot_;
  for (std::size_t at = 0; at < bytes.size(); at += block) {
    std::memcpy(seg_.protocol_view(first_block(slot) + at / block).data(), bytes.data() + at,
                std::min(block, bytes.size() - at));
  }
  seg_.set_tags(first_block(slot), first_block(slot) + blocks_per_slot_, memory::tag::read_write);
}

bool slot_store::release(std::uint32_t slot) {
  for (std::size_t b = 0; b < blocks_per_slot_; ++b) seg_.set_tag(first_block(slot) + b, memory::tag::invalid);
  if (owner(slot) != squall::node()) return false;
  free_.push_back(slot);
  return true;
}

void slot_store::free_slot(std::uint32_t slot) { free_.push_back(slot); }

}  // namespace squall::arrays::detail
