// SPDX-License-Identifier: BSD-3-Clause
// The handler-thread fault path, where SIGBUS delivery is unavailable or not wanted
// (SQUALL_FAULT_PATH=thread): the faulting thread waits in the kernel while a thread of the
// memory layer reads the fault from the userfaultfd, runs the protocol, and wakes it.
#pragma once

namespace squall::memory::detail {

// Starts the thread (it lives as long as the process).
void start_fault_thread(int uffd);

}  // namespace squall::memory::detail
