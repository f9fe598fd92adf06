// SPDX-License-Identifier: BSD-3-Clause
// Runs of fresh blocks that segment::set_tags raises inside a fault handler are mapped after
// the handler, outside the fault lock and the node lock: mapping is where shmem zeroes a
// page, and a node alone in its job claims 2 MiB at a fault (libtsm fault-around), so two
// threads' first touches are then zeroed side by side instead of one after the other.
//
// A run's tags are stored at once; its pages are mapped before the faulting thread runs on
// (before the handler returns on the SIGBUS path, before the wake on the thread path). Another
// thread touching a page of it meanwhile faults and finds its tag allowing the access, which
// maps that page: the same pages mapped twice is harmless. What must not happen is a tag
// lowered, and its pages unmapped, before the late mapping maps them again; so every lowering
// (change_tag), and a segment's retirement, first maps the segment's runs still kept, whichever
// thread kept them (that thread may be waiting, in its handler, for the node lock the lowering
// holds), and waits for those being mapped, which needs no lock. System calls and atomics
// only: safe in a signal handler.
#pragma once
#include "memory/segment_table.hpp"

namespace squall::memory::detail {

// While one is open on this thread (a fault handler runs), defer_mapping may keep runs.
class mapping_deferred {
 public:
  mapping_deferred();
  ~mapping_deferred();
  mapping_deferred(const mapping_deferred&) = delete;
  mapping_deferred& operator=(const mapping_deferred&) = delete;
};

// Keeps blocks [first, first + count) of `s` (their tags stored by the caller) to map after
// the handler; false when none is open on this thread or it keeps enough already: the caller
// maps them now.
bool defer_mapping(segment_state& s, int uffd, block_index first, std::size_t count, bool write_protected);

// Maps the runs this thread kept (the fault path calls it once the locks are let go).
void map_deferred();

// Before a tag of `s` is lowered, and before `s` retires: maps every run of `s` still kept,
// whichever thread kept it, then waits for those other threads are mapping.
void wait_for_deferred_maps(segment_state& s);

}  // namespace squall::memory::detail
