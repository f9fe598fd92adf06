// SPDX-License-Identifier: BSD-3-Clause
// Making the kernel's own accesses to shared memory work. In SIGBUS mode a system call that
// touches a page whose tag forbids the access (or whose PTE is absent) fails with EFAULT
// instead of faulting into a handler; so before such a call the tags of the range are
// raised through the protocol, as a program access would, and after an EFAULT (a tag
// lowered meanwhile by a message handler) the range is prepared again and the call retried.
#pragma once
#include <cstddef>
#include <cstdint>

namespace squall::memory::detail {

// Raises the tags of the blocks in [start, start+len) so that a read (or write) is allowed.
// Returns false, at the cost of one comparison, when the range is not in the segment range.
// (Addresses as integers: the memory is not read here.)
bool prepare_access(std::uintptr_t start, std::size_t len, bool write);
// Like prepare_access, and also maps the PTEs of blocks whose tags already allow it.
void repair_access(std::uintptr_t start, std::size_t len, bool write);

// For the message layer, before it takes the node lock: makes [start, start+len) readable
// (prepare_access) and returns where the engine may read those bytes under the lock without
// faulting - the protocol view when the range is in a segment (usage_error if it is not
// within one segment), else start itself. Costs one comparison outside the segment range.
const std::byte* readable_source(const std::byte* start, std::size_t len);

// Whether [start, start+len) touches the range where segments live (one comparison; false
// for an empty range).
bool in_segment_range(const std::byte* start, std::size_t len);

}  // namespace squall::memory::detail
