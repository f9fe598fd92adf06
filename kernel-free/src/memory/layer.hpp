// SPDX-License-Identifier: BSD-3-Clause
// The memory layer of this process: the segment range, the userfaultfd and the fault path.
// It starts on first use (the first allocation or query), not at squall::init, so programs
// that use no shared segments never need userfaultfd.
#pragma once
#include <cstddef>
#include <cstdint>

#include <squall/memory.hpp>

#include "memory/address_space.hpp"
#include "memory/uffd_device.hpp"
#include "memory/write_recording.hpp"

namespace squall::memory::detail {

struct layer {
  address_space space;
  userfaultfd uffd;
  write_recorder recorder;  // for segments' recorded_writes ranges
  fault_path path = fault_path::sigbus;
  std::uint32_t next_generation = 1;  // the same sequence on every node (allocation is collective)
};

// Starts the layer if needed: reads SQUALL_SEGMENT_BASE, SQUALL_SEGMENT_SPACE_GIB and
// SQUALL_FAULT_PATH, probes userfaultfd, reserves the range and installs the fault path.
layer& started_layer();

// The size of the segment range (SQUALL_SEGMENT_SPACE_GIB), read without starting the layer.
std::size_t configured_range_bytes();

// The layer once started, else nullptr. Safe in a signal handler.
layer* running_layer();

}  // namespace squall::memory::detail
