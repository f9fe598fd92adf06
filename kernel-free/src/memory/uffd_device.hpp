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

}  // namespace squall::memory::detail
