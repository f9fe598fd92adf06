// SPDX-License-Identifier: BSD-3-Clause
#include "memory/stray_access.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/log.hpp"
#include "memory/layer.hpp"
#include "memory/segment_table.hpp"

namespace squall::memory::detail {
namespace {

struct sigaction previous_sigsegv_action;

void die_of(int sig) {
  signal(sig, SIG_DFL);
  raise(sig);
}

void on_sigsegv(int sig, siginfo_t* info, void* context) {
  const layer* l = running_layer();
  if (l != nullptr && l->space.contains(info->si_addr) && find_segment(info->si_addr) == nullptr) {
    // snprintf and write only: nothing here may allocate or take a lock.
    char text[200];
    const int n = std::snprintf(text, sizeof text,
                                "squall: access to %p, in the shared-segment range but in no segment "
                                "(memory that was freed, or past a segment's end)\n",
                                info->si_addr);
    if (n > 0) [[maybe_unused]] auto w = ::write(STDERR_FILENO, text, static_cast<std::size_t>(n));
    die_of(sig);
    return;
  }
  if ((previous_sigsegv_action.sa_flags & SA_SIGINFO) != 0) {
    previous_sigsegv_action.sa_sigaction(sig, info, context);
  } else if (previous_sigsegv_action.sa_handler == SIG_DFL) {
    die_of(sig);
  } else if (previous_sigsegv_action.sa_handler != SIG_IGN) {
    previous_sigsegv_action.sa_handler(sig);
  }
}

}  // namespace

void install_stray_access_reporter() {
  struct sigaction action {};
  action.sa_sigaction = on_sigsegv;
  action.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGSEGV, &action, &previous_sigsegv_action) != 0) {
    fatal("cannot install the SIGSEGV reporter for the segment range: %s", std::strerror(errno));
  }
}

}  // namespace squall::memory::detail
