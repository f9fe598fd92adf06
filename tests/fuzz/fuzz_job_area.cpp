// SPDX-License-Identifier: BSD-3-Clause
// A job area as another process wrote it: a node maps it only if its header checks out,
// and then every ring and mailbox line of this host's nodes must lie inside it.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "transport/shm/job_area.hpp"
#include "transport/shm/ring.hpp"

using namespace squall::shm;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // In memory aligned as a mapping is; ASan sees a read past `size`.
  void* copy = std::aligned_alloc(64, (size + 63) / 64 * 64 + 64);
  std::memcpy(copy, data, size);
  std::string why;
  const bool ok = job_area::well_formed(copy, size, why);
  std::free(copy);
  if (!ok) {
    if (why.empty()) __builtin_trap();
    return 0;
  }
  const int fd = memfd_create("fuzz-job", MFD_CLOEXEC);
  if (fd < 0 || write(fd, data, size) != static_cast<ssize_t>(size)) std::abort();
  const job_area job = job_area::attach(fd);  // closes fd
  const auto* begin = reinterpret_cast<const char*>(&job.header());
  const char* end = begin + size;
  for (int a = 0; a < job.nodes(); ++a) {
    for (int b = 0; b < job.nodes(); ++b) {
      if (!job.on_this_host(a) || !job.on_this_host(b)) continue;
      const auto* ring = static_cast<const char*>(job.ring(a, b));
      const auto* line = reinterpret_cast<const char*>(job.mailbox_line(a, b));
      if (ring < begin || ring + ring_stride(job.ring_bytes()) > end) __builtin_trap();
      if (line < begin || line + sizeof(pair_line) > end) __builtin_trap();
    }
  }
  munmap(const_cast<char*>(begin), size);
  return 0;
}
