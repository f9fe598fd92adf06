// SPDX-License-Identifier: BSD-3-Clause
#include "common/runtime_thread.hpp"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "common/log.hpp"

namespace squall {

void runtime_thread_failed(const char* name, int err) {
  std::string limit;
  rlimit processes{};
  if (err == EAGAIN && ::getrlimit(RLIMIT_NPROC, &processes) == 0 && processes.rlim_cur != RLIM_INFINITY) {
    limit = " (this user may run " + std::to_string(processes.rlim_cur) +
            " processes and threads in all, 'ulimit -u', and each node runs a few threads of its own "
            "beside the program's (progress, watchdog, a transport's I/O, faults): raise the limit, or "
            "run fewer nodes per host)";
  }
  fatal("cannot start the runtime's thread %s: %s%s", name, std::strerror(err), limit.c_str());
}

}  // namespace squall
