// SPDX-License-Identifier: BSD-3-Clause
// The memory layer's counters, in the per-node statistics (stats::take, SQUALL_STATS=1).
#pragma once
#include "stats/counters.hpp"

namespace squall::memory::detail {

inline const int read_faults_on_invalid = stats::counter_slot("memory.faults.read_invalid");
inline const int write_faults_on_invalid = stats::counter_slot("memory.faults.write_invalid");
inline const int write_faults_on_read_only = stats::counter_slot("memory.faults.write_readonly");
inline const int fault_handler_ns = stats::counter_slot("memory.fault_handler_ns");
// Faults the tag already allowed: the first touch of a block, or pages the kernel reclaimed.
inline const int pages_mapped_on_touch = stats::counter_slot("memory.mapped_on_touch");
// Thread path: reports not served because no thread waits on them any more (duplicates in
// one read of a block already woken, reports for a segment being freed or freed), and reports
// read before a free began, whose page is woken instead (thread_path.cpp).
inline const int reports_not_served = stats::counter_slot("memory.reports_not_served");
// Runs of pages filled around a fault before it was served (segment_options::fill_around_faults).
inline const int fills_around = stats::counter_slot("memory.fills_around");
// Blocks copied from a home on this host through its memory (segment::copy_from_home), and
// other nodes' memory that could not be mapped for it (home_views.hpp).
inline const int home_copies = stats::counter_slot("memory.home_copies");
inline const int home_views_refused = stats::counter_slot("memory.home_views_refused");
// Of home_copies, those read one-sidedly over the network transport (UCX's RMA get).
inline const int remote_reads = stats::counter_slot("memory.remote_reads");
inline const int tag_changes = stats::counter_slot("memory.tag_changes");
inline const int installs = stats::counter_slot("memory.installs");
// Recorded writes (write_recording.hpp): PAGEMAP_SCAN calls, and ReadOnly blocks they found
// written (each a store that did not fault).
inline const int write_scans = stats::counter_slot("memory.write_scans");
inline const int writes_recorded = stats::counter_slot("memory.writes_recorded");
// System calls on shared memory retried after EFAULT.
inline const int syscall_retries = stats::counter_slot("memory.syscall_retries");

inline void count(int slot, std::uint64_t n = 1) {
  stats::counter_at(slot).fetch_add(n, std::memory_order_relaxed);
}

}  // namespace squall::memory::detail
