// SPDX-License-Identifier: BSD-3-Clause
// Reserving a job area's memory when it is made. tmpfs (/dev/shm, a memfd) hands out pages on
// first touch, and a page it cannot give then kills the toucher with a bare SIGBUS, in the
// middle of a run; every page of the area is written sooner or later (a ring wraps around),
// so it is all allocated up front, where running short can be said plainly. Segments are
// not (one may exceed memory and most of it stay untouched): page_tables.cpp allocates each
// block of their memfd when it is first mapped, and says so when that fails.
#pragma once
#include <cstddef>

namespace squall::shm {

// Allocates the first `bytes` of the shared file `fd`. When they do not fit, removes the
// file's name (if it has one: nobody will use it) and ends the process with a message naming
// the file, the bytes needed and free, and how to make room.
void reserve_job_memory(int fd, std::size_t bytes, int local_nodes, std::size_t ring_bytes);

}  // namespace squall::shm
