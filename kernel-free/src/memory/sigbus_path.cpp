// SPDX-License-Identifier: BSD-3-Clause
#include "memory/sigbus_path.hpp"

#include <signal.h>
#include <ucontext.h>

#include <cerrno>
#include <cstring>

#include "common/log.hpp"
#include "memory/fault_service.hpp"
#include "memory/layer.hpp"

namespace squall::memory::detail {
namespace {

struct sigaction previous_sigbus_action;

// Whether the faulting instruction wrote: the page-fault error code the kernel saves in
// the signal frame. Elsewhere every fault is taken as a read; a write then faults again
// on the ReadOnly block and is served as a write.
bool faulting_access_wrote(const void* context) {
#if defined(__x86_64__)
  constexpr long page_fault_trap = 14, write_bit = 2;
  const auto& regs = static_cast<const ucontext_t*>(context)->uc_mcontext.gregs;
  return regs[REG_TRAPNO] == page_fault_trap && (regs[REG_ERR] & write_bit) != 0;
#else
  (void)context;
  return false;
#endif
}

void pass_to_previous(int sig, siginfo_t* info, void* context) {
  if ((previous_sigbus_action.sa_flags & SA_SIGINFO) != 0) {
    previous_sigbus_action.sa_sigaction(sig, info, context);
  } else if (previous_sigbus_action.sa_handler == SIG_DFL) {
    signal(sig, SIG_DFL);  // die of the signal, as without Squall
    raise(sig);
  } else if (previous_sigbus_action.sa_handler != SIG_IGN) {
    previous_sigbus_action.sa_handler(sig);
  }
}

// The signal is synchronous: the thread raised it by its own load or store to a shared
// segment, so it is interrupted at that instruction, never inside the C library's allocator
// (whose memory is no segment). What a fault's wait runs may therefore allocate (a
// collective's message that arrives meanwhile is kept on the heap). It may be inside stdio
// (printf of a shared string holds the stream's lock), so nothing here uses stdio.
void on_sigbus(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  segment_state* s = info->si_code == BUS_ADRERR ? find_segment(info->si_addr) : nullptr;
  if (s == nullptr) {
    pass_to_previous(sig, info, context);
  } else {
    serve_fault(*s, s->block_of(info->si_addr), faulting_access_wrote(context));
  }
  errno = saved_errno;
}

}  // namespace

void install_sigbus_handler() {
  struct sigaction action {};
  action.sa_sigaction = on_sigbus;
  // NODEFER: a handler that faults on shared memory reaches serve_fault, which reports it.
  action.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGBUS, &action, &previous_sigbus_action) != 0) {
    fatal("cannot install the SIGBUS handler for shared segments: %s", std::strerror(errno));
  }
}

}  // namespace squall::memory::detail
