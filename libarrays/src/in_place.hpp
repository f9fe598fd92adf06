// SPDX-License-Identifier: BSD-3-Clause
// Elements in the shared virtual address space (array::create_in_place): one kernel-free
// segment per array, cut into slots, at the same address on every node. A slot holds an
// arena header (the element's heap, element_base::heap()), the element, and the arena's
// bytes. Node n hands out slots [n * per_node, (n + 1) * per_node); a slot stays the
// element's wherever it goes, until it is deleted, and then returns to the node that handed
// it out.
//
// A slot's pages are accessible (ReadWrite) only on the node where its element lives, and
// Invalid everywhere else: a pointer kept into an element that has moved away faults, and the
// fault handler ends the program with a message that says so, rather than reading stale data.
#pragma once
#include <squall/arrays/array.hpp>
#include <squall/memory.hpp>

#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <span>
#include <string>
#include <vector>

namespace squall::arrays::detail {

// A bump allocator over the rest of a slot. Memory is given back only when the element is
// deleted (its slot is), so a container that grows and shrinks over and over wastes the
// slot: size slot_bytes for the element's largest state.
class slot_arena : public std::pmr::memory_resource {
 public:
  slot_arena(std::byte* begin, std::size_t bytes) : begin_(begin), capacity_(bytes) {}

 private:
  void* do_allocate(std::size_t bytes, std::size_t align) override;
  void do_deallocate(void*, std::size_t, std::size_t) override {}
  bool do_is_equal(const std::pmr::memory_resource& o) const noexcept override { return this == &o; }

 public:
  // The end of what the arena has handed out: the slot's bytes beyond it mean nothing.
  const std::byte* end_used() const { return begin_ + used_; }

 private:
  std::byte* begin_;
  std::size_t capacity_;
  std::size_t used_ = 0;
};

class slot_store {
 public:
  slot_store(const element_ops& ops, const in_place_options& options);  // collective
  ~slot_store();

  // A free slot of this node's range, with a fresh arena and the element constructed in it.
  element_base* construct(std::uint32_t& slot_out);
  // The element in a slot whose bytes are here (after arrive).
  element_base* object(std::uint32_t slot) const;
  // The slot's bytes in use (arena, element, what the arena handed out), to ship; then its
  // pages become Invalid here.
  std::string leave(std::uint32_t slot);
  // The shipped bytes written at the slot's address here, its pages made accessible.
  void arrive(std::uint32_t slot, std::string_view bytes);
  // The element was destroyed: its pages become Invalid here and the slot goes back to the
  // node that handed it out (true when that is this node; false: tell it with free_remote).
  bool release(std::uint32_t slot);
  void free_slot(std::uint32_t slot);  // at the slot's owner
  int owner(std::uint32_t slot) const { return static_cast<int>(slot / per_node_); }

 private:
  std::byte* address(std::uint32_t slot) const { return seg_.base() + std::size_t{slot} * slot_bytes_; }
  memory::block_index first_block(std::uint32_t slot) const { return std::size_t{slot} * blocks_per_slot_; }

  const element_ops& ops_;
  memory::segment seg_;
  std::size_t slot_bytes_, per_node_, blocks_per_slot_, object_offset_;
  std::vector<std::uint32_t> free_;  // this node's range
};

}  // namespace squall::arrays::detail
