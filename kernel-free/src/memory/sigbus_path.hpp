// SPDX-License-Identifier: BSD-3-Clause
// The SIGBUS fault path: userfaultfd (UFFD_FEATURE_SIGBUS) makes the faulting thread take
// SIGBUS, and the handler runs the protocol in that thread, as Blizzard did. The access is
// retried when the signal handler returns.
#pragma once

namespace squall::memory::detail {

// Installs the handler; SIGBUS outside shared segments goes to the previous one.
void install_sigbus_handler();

}  // namespace squall::memory::detail
