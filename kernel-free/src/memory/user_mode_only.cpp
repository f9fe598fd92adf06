// SPDX-License-Identifier: BSD-3-Clause
#include "memory/user_mode_only.hpp"

#include <fstream>
#include <string>

#include "common/log.hpp"
#include "runtime/node.hpp"

namespace squall::memory::detail {
namespace {

// "vm.unprivileged_userfaultfd=0" as this host has it, or "" when it cannot be read.
std::string sysctl_setting() {
  std::ifstream file("/proc/sys/vm/unprivileged_userfaultfd");
  std::string value;
  if (!(file >> value)) return "";
  return "vm.unprivileged_userfaultfd=" + value;
}

}  // namespace

void warn_user_mode_only() {
  if (const rt::node_runtime* nd = rt::current(); nd != nullptr && nd->control().local_index != 0) return;
  const std::string setting = sysctl_setting();
  warn("userfaultfd serves faults in user mode only here (%s%sthis user has neither CAP_SYS_PTRACE nor "
       "access to /dev/userfaultfd), so the thread fault path cannot serve the kernel's: a system call "
       "Squall does not interpose (getcwd, stat, syscall(2), ...) that reads or writes an Invalid block of a "
       "shared segment fails with EFAULT instead of waiting for the block. Fix: 'sysctl "
       "vm.unprivileged_userfaultfd=1', or run as root or with CAP_SYS_PTRACE, or give this user read-write "
       "access to /dev/userfaultfd (said once per host)",
       setting.c_str(), setting.empty() ? "" : " and ");
}

}  // namespace squall::memory::detail
