// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The TSM/XSM versions' numbering of the shared arrays (section 5.1.1: "reorder the array so
// that data in the same partition is placed in contiguous addresses"): node p's RCB part is
// the elements [first(p), first(p) + its count), first(p) a multiple of block_size / 8, so
// that in an array of doubles per mesh node (8 bytes) or of NodeValues (40 bytes) each node's
// elements fill whole blocks of its own, homed on it (homes()). Every part leaves at least
// kRoom elements of padding before the next node's, so that an array may be addressed kRoom
// elements into its segment and still keep each node's elements in its blocks (xsm_flow.cpp:
// two arrays that start on a page, indexed together, otherwise alias in the low 12 bits of
// every address).
#include <cstddef>
#include <cstdint>
#include <vector>

#include <squall/chaos/translation_table.hpp>
#include <squall/memory.hpp>

#include "squall/apps/unstructured/mesh.hpp"

namespace squall::apps::unstructured {

class BlockRenaming {
 public:
  // Collective. block_size: the shared arrays' block (a power of two, at least 8 bytes).
  BlockRenaming(const squall::chaos::translation_table& table, std::size_t block_size);
  // 51 NodeValues are 2,040 bytes, about half a page (xsm_flow.cpp).
  static constexpr std::int64_t kRoom = 51;

  std::int64_t element_of(NodeId node) const { return element_[node]; }
  std::int64_t first(int node) const { return first_[static_cast<std::size_t>(node)]; }
  std::int64_t length() const { return first_.back(); }  // elements, padding included
  // The homes of an array of `element_bytes` (8 or a multiple of 8 dividing 40: 8 or 40) per
  // element; the renaming must outlive the array.
  squall::memory::home_policy homes(std::size_t element_bytes) const;

 private:
  std::size_t block_size_;
  std::vector<std::int64_t> element_;  // by mesh node name
  std::vector<std::int64_t> first_;    // per node, then the length
};

}  // namespace squall::apps::unstructured
