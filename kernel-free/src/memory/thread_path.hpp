// SPDX-License-Identifier: BSD-3-Clause
// The handler-thread fault path, where SIGBUS delivery is unavailable or not wanted
// (SQUALL_FAULT_PATH=thread): the faulting thread waits in the kernel while a thread of the
// memory layer reads the fault from the userfaultfd, runs the protocol, and wakes it.
#pragma once

namespace squall::memory::detail {

// Starts fault threads until `threads` serve the userfaultfd (they live as long as the
// process). Each reads reports and serves them; all wake at a report, one takes it.
void start_fault_threads(int uffd, int threads);

}  // namespace squall::memory::detail
