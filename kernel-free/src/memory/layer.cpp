// SPDX-License-Identifier: BSD-3-Clause
#include "memory/layer.hpp"

#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

#include "common/config.hpp"
#include "common/log.hpp"
#include "memory/sigbus_path.hpp"
#include "memory/stray_access.hpp"
#include "memory/thread_path.hpp"
#include "memory/user_mode_only.hpp"

namespace squall::memory::detail {
namespace {

// ThreadSanitizer keeps its shadow memory where the default range lies and lets a program
// map only its "application" ranges; under it, the default range is in the low one
// (0x1000-0x80'0000'0000 on x86-64 Linux), so the memory and TSM tests run under TSan too.
#if defined(SQUALL_TSAN)
constexpr std::uintptr_t default_base = 0x10'0000'0000;
constexpr long long default_space_gib = 256;
#else
constexpr std::uintptr_t default_base = 0x5000'0000'0000;
constexpr long long default_space_gib = 1024;
#endif
constexpr std::uintptr_t user_space_end = std::uintptr_t{1} << 47;

std::atomic<layer*> the_layer{nullptr};

std::uintptr_t configured_base() {
  const char* text = std::getenv("SQUALL_SEGMENT_BASE");
  if (text == nullptr || *text == '\0') return default_base;
  const std::optional<std::uint64_t> v = parse_hex(text);  // as strict as the decimal settings
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  if (!v || *v == 0 || *v % page != 0 || *v >= user_space_end) {
    fatal("SQUALL_SEGMENT_BASE must be a page-aligned hexadecimal address below 0x%" PRIxPTR
          " (got '%s')",
          user_space_end, text);
  }
  return static_cast<std::uintptr_t>(*v);
}

fault_path configured_path() {
  const char* text = std::getenv("SQUALL_FAULT_PATH");
  const bool sigbus = sigbus_supported();
  if (text == nullptr || *text == '\0' || std::strcmp(text, "auto") == 0) {
    return sigbus ? fault_path::sigbus : fault_path::thread;
  }
  if (std::strcmp(text, "thread") == 0) return fault_path::thread;
  if (std::strcmp(text, "sigbus") == 0) {
    if (!sigbus) {
      fatal("SQUALL_FAULT_PATH=sigbus, but this kernel cannot deliver userfaultfd faults as "
            "SIGBUS (UFFD_FEATURE_SIGBUS, Linux 4.14+); use SQUALL_FAULT_PATH=thread");
    }
    return fault_path::sigbus;
  }
  fatal("SQUALL_FAULT_PATH must be auto, sigbus or thread (got '%s')", text);
}

layer* start() {
  auto* l = new layer;  // never destroyed: faults may be served until the process ends
  const std::uintptr_t base = configured_base();
  const std::size_t bytes = configured_range_bytes();
  if (base + bytes > user_space_end) {
    fatal("the segment range 0x%" PRIxPTR " + %zu GiB (SQUALL_SEGMENT_BASE, "
          "SQUALL_SEGMENT_SPACE_GIB) ends beyond the user address space (0x%" PRIxPTR ")",
          base, bytes >> 30, user_space_end);
  }
  l->path = configured_path();
  l->uffd = open_userfaultfd(l->path == fault_path::sigbus);
  if (l->path == fault_path::thread && !l->uffd.kernel_faults) warn_user_mode_only();
  l->space.reserve(base, bytes);
  install_stray_access_reporter();
  l->recorder = open_write_recorder(l->path == fault_path::sigbus);
  if (l->path == fault_path::sigbus) {
    install_sigbus_handler();
  } else {
    start_fault_threads(l->uffd.fd, 1);
  }
  return l;
}

}  // namespace

std::size_t configured_range_bytes() {
  return static_cast<std::size_t>(env_int("SQUALL_SEGMENT_SPACE_GIB", default_space_gib, 1, 1 << 16)) << 30;
}

layer& started_layer() {
  static std::once_flag once;
  std::call_once(once, [] { the_layer.store(start(), std::memory_order_release); });
  return *the_layer.load(std::memory_order_acquire);
}

layer* running_layer() { return the_layer.load(std::memory_order_acquire); }

}  // namespace squall::memory::detail
