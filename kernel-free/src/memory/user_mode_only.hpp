// SPDX-License-Identifier: BSD-3-Clause
// The warning for a userfaultfd that serves faults in user mode only (UFFD_USER_MODE_ONLY, the
// fallback for a user who may not have one for the kernel's faults) on the thread fault path:
// everything works but a system call Squall does not interpose touching an Invalid block,
// which then fails with EFAULT. On the SIGBUS path nothing changes: the kernel's faults fail
// with EFAULT there whatever the userfaultfd (SIGBUS reaches user mode only).
#pragma once

namespace squall::memory::detail {

// Says why the kernel's faults are not served, what breaks and how to fix it: once per host,
// from its first node (the others run as the same user under the same settings), or from this
// process when it runs outside a job.
void warn_user_mode_only();

}  // namespace squall::memory::detail
