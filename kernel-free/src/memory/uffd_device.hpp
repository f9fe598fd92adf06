// SPDX-License-Identifier: BSD-3-Clause
// Opening a userfaultfd and checking that this kernel and this user can serve Squall's
// access control; anything missing ends the process with one message saying how to fix it.
#pragma once

namespace squall::memory::detail {

struct userfaultfd {
  int fd = -1;
  bool sigbus = false;         // faults arrive as SIGBUS in the faulting thread
  bool kernel_faults = false;  // faults in system calls reach the handler thread (else EFAULT)
};

// Whether the kernel can deliver faults as SIGBUS (UFFD_FEATURE_SIGBUS).
bool sigbus_supported();

// A non-blocking userfaultfd with MISSING, MINOR and write-protect on shared memory, and
// SIGBUS delivery when `sigbus`.
userfaultfd open_userfaultfd(bool sigbus);

// A second userfaultfd like the SIGBUS one, but in asynchronous write-protect mode
// (UFFD_FEATURE_WP_ASYNC, Linux 6.7+): a store to a write-protected page is let through by
// the kernel, which clears the page's write-protect bit instead of reporting a fault. fd is
// -1 where the kernel does not offer it.
userfaultfd open_recording_userfaultfd();

}  // namespace squall::memory::detail
