// SPDX-License-Identifier: BSD-3-Clause
// What each tag means for the application view's page-table entries, and the calls that
// change them: Invalid = no PTE (the page cache keeps the data), ReadOnly = mapped and
// write-protected, ReadWrite = mapped writable. No mprotect, so no VMA is ever split.
// System calls only: safe in a signal handler.
#pragma once
#include <squall/memory.hpp>

#include "memory/segment_table.hpp"

namespace squall::memory::detail {

// Maps the block's pages from the page cache (UFFDIO_CONTINUE), write-protected or not.
// Pages already mapped get the asked-for protection.
void map_block(int uffd, const segment_state& s, block_index b, bool write_protected);
// The same for blocks [b, b + count), with as few system calls as the kernel allows.
void map_blocks(int uffd, const segment_state& s, block_index b, std::size_t count, bool write_protected);
// Allocates the pages of blocks [b, b + count) in the segment's memory object (zero where
// never written), or does nothing if memory is short: the mapping that needs them reports that.
void fill_pages(const segment_state& s, block_index b, std::size_t count);
void write_protect_block(int uffd, const segment_state& s, block_index b, bool on);
void unmap_block(const segment_state& s, block_index b);

// Takes the block's PTEs from what `from` means to what `to` means, then stores `to`.
void change_tag(int uffd, segment_state& s, block_index b, tag from, tag to);

inline bool allows(tag t, bool write) { return write ? t == tag::read_write : t != tag::invalid; }
const char* tag_name(tag t);

}  // namespace squall::memory::detail
