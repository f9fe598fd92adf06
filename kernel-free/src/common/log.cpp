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
std::atomic<void (*)(const char*)> last_words{nullptr};

// Writes the line (one write(2)); `line` keeps its message after the returned offset, the
// "squall: node N: " prefix before it. Allocates nothing: fatal_in_signal uses it.
int emit(char (&line)[1024], const char* kind, const char* fmt, va_list ap) {
  int n = 0;
  const int node = log_node.load(std::memory_order_relaxed);
  if (node >= 0) {
    n = std::snprintf(line, sizeof line, "squall: node %d: %s", node, kind);
  } else {
    n = std::snprintf(line, sizeof line, "squall: %s", kind);
  }
  const int prefix = n;
  n += std::vsnprintf(line + n, sizeof line - static_cast<size_t>(n) - 1, fmt, ap);
  if (n > static_cast<int>(sizeof line) - 2) n = sizeof line - 2;
  line[n++] = '\n';
  [[maybe_unused]] auto w = ::write(STDERR_FILENO, line, static_cast<size_t>(n));
  line[n - 1] = '\0';
  return prefix;
}

}  // namespace

void set_log_node(int node) { log_node.store(node, std::memory_order_relaxed); }
void set_last_words(void (*fn)(const char* message)) { last_words.store(fn); }

void fatal(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char line[1024];
  const int message = emit(line, "", fmt, ap);
  va_end(ap);
  // Once: a fatal inside the last words (or on a second thread meanwhile) just ends.
  if (auto* fn = last_words.exchange(nullptr)) fn(line + message);
  // Every stream, found through the C library's own list: naming `stdout` would read a
  // variable that, copy-relocated into a PARMACS program's shared globals, may live on a
  // node that is gone.
  std::fflush(nullptr);
#if defined(SQUALL_TSAN)
  // ThreadSanitizer's _exit flushes `stdout` and `stderr` by name, which is that read; and
  // its reports are made as races happen, so there is nothing left for its exit to do.
  ::syscall(SYS_exit_group, EXIT_FAILURE);
#endif
  ::_exit(EXIT_FAILURE);
}

void fatal_in_signal(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char line[1024];
  emit(line, "", fmt, ap);
  va_end(ap);
  ::_exit(EXIT_FAILURE);
}

void warn(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char line[1024];
  emit(line, "warning: ", fmt, ap);
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
