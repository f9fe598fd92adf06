// SPDX-License-Identifier: BSD-3-Clause
#include "common/log.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace squall {
namespace {

std::atomic<int> log_node{-1};

void emit(const char* kind, const char* fmt, va_list ap) {
  char line[1024];
  int n = 0;
  const int node = log_node.load(std::memory_order_relaxed);
  if (node >= 0) {
    n = std::snprintf(line, sizeof line, "squall: node %d: %s", node, kind);
  } else {
    n = std::snprintf(line, sizeof line, "squall: %s", kind);
  }
  n += std::vsnprintf(line + n, sizeof line - static_cast<size_t>(n) - 1, fmt, ap);
  if (n > static_cast<int>(sizeof line) - 2) n = sizeof line - 2;
  line[n++] = '\n';
  [[maybe_unused]] auto w = ::write(STDERR_FILENO, line, static_cast<size_t>(n));
}

}  // namespace

void set_log_node(int node) { log_node.store(node, std::memory_order_relaxed); }

void fatal(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit("", fmt, ap);
  va_end(ap);
  // Every stream, found through the C library's own list: naming `stdout` would read a
  // variable that, copy-relocated into a PARMACS program's shared globals, may live on a
  // node that is gone.
  std::fflush(nullptr);
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer's _exit flushes `stdout` and `stderr` by name, which is that read; and
  // its reports are made as races happen, so there is nothing left for its exit to do.
  ::syscall(SYS_exit_group, EXIT_FAILURE);
#endif
  ::_exit(EXIT_FAILURE);
}

void fatal_in_signal(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit("", fmt, ap);
  va_end(ap);
  ::_exit(EXIT_FAILURE);
}

void warn(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit("warning: ", fmt, ap);
  va_end(ap);
}

std::string format(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char buf[1024];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

}  // namespace squall
