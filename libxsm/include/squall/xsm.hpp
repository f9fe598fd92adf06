// SPDX-License-Identifier: BSD-3-Clause
// Extensible shared memory: TSM memory (squall/tsm.hpp) whose data structures each name the
// coherence protocol that keeps them, as in the paper's XSM. Most data stays under TSM's
// stache; the structures that matter are given custom protocols (PROTOCOLS.md: reductions,
// updates, appends, a multiple-writer protocol) or a program's own (README.md).
//
//   squall::runtime rt(&argc, &argv);
//   squall::xsm::migratory mig;                               // a protocol object per structure
//   auto* cells = squall::xsm::alloc<cell>(n, mig);           // collective, bound to `mig`
//   double* rest = squall::tsm::alloc<double>(m);             // stache, as always
//   ... plain loads and stores; tsm::barrier(), tsm::lock_array as in TSM ...
//   squall::xsm::free(cells);                                 // collective
//
// Protocol objects belong to the program and must outlive the memory bound to them; one
// object runs one data structure (one segment, or ranges of one).
//
// A call that needs the runtime, made before squall::init or after squall::finalize, is a
// usage_error naming itself ("xsm::alloc called before squall::init"); libxsm's objects
// destroyed after finalize free nothing together (the runtime has stopped for good).
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include <squall/tsm.hpp>
#include <squall/xsm/protocol.hpp>

namespace squall::xsm {

using tsm::options;

// Bytes [first_byte, first_byte + bytes) of a segment run by `p` (whole blocks).
using range = tsm::range_binding;

// Collective: `bytes` of TSM memory whose ranges run the protocols given, and every other
// block stache. usage_error for overlapping ranges, ranges not on block boundaries or outside
// the memory, or a block size a protocol refuses.
inline void* alloc_bytes(std::size_t bytes, std::initializer_list<range> ranges, const options& opt = {}) {
  return tsm::detail::alloc_bound(bytes, std::span<const range>(ranges.begin(), ranges.size()), opt, "xsm::alloc_bytes");
}

// Collective: `count` elements, every block run by `p`.
template <class T>
T* alloc(std::size_t count, protocol& p, const options& opt = {}) {
  static_assert(std::is_trivially_copyable_v<T>, "squall::xsm::alloc: T must be trivially copyable");
  if (count > SIZE_MAX / sizeof(T)) tsm::detail::too_many_elements(count, sizeof(T), "xsm::alloc");
  const std::size_t bytes = count * sizeof(T);
  tsm::detail::check_block_size(opt.block_size, "xsm::alloc");  // before dividing by it
  const std::size_t whole = (bytes + opt.block_size - 1) / opt.block_size * opt.block_size;
  const range whole_range{0, whole == 0 ? opt.block_size : whole, &p};
  return static_cast<T*>(tsm::detail::alloc_bound(bytes, std::span<const range>(&whole_range, 1), opt, "xsm::alloc"));
}

// Collective: rebinds a range of XSM or TSM memory to `p` before any node touched it.
inline void bind(void* start, std::size_t bytes, protocol& p) { tsm::detail::bind(start, bytes, p, "xsm::bind"); }

// Collective: frees what alloc or alloc_bytes returned (the protocols are told first).
inline void free(void* p) { tsm::detail::free(p, "xsm::free"); }

}  // namespace squall::xsm
