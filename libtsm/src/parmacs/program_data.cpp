// SPDX-License-Identifier: BSD-3-Clause
// The executable's own writable data: the part of its writable PT_LOAD after the RELRO
// part (which is read-only once the program runs), from the page holding the RELRO end
// to the page ending the bss. What lies there besides the program's globals (the lazy
// binding GOT, copy-relocated library variables such as stdout) holds the same bytes on
// every node, so sharing it is harmless, except a sanitizer's variables: its checks read
// them in every function, fault handlers included, so they must not fault.
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "parmacs/parmacs.hpp"

namespace squall::tsm::parmacs {
namespace {

struct found {
  std::uintptr_t lo = 0, hi = 0, relro_end = 0;
};

int first_object(dl_phdr_info* info, std::size_t, void* out) {
  auto& f = *static_cast<found*>(out);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const std::uintptr_t start = info->dlpi_addr + ph.p_vaddr, end = start + ph.p_memsz;
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_W) != 0) {
      f.lo = f.lo == 0 ? start : std::min(f.lo, start);
      f.hi = std::max(f.hi, end);
    } else if (ph.p_type == PT_GNU_RELRO) {
      f.relro_end = end;
    }
  }
  return 1;  // the first object is the executable
}

}  // namespace

byte_range program_data() {
  found f;
  dl_iterate_phdr(first_object, &f);
  if (f.hi == 0) fail("the program has no writable data segment");
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  std::uintptr_t start = f.lo;
  if (f.relro_end > f.lo && f.relro_end < f.hi) start = f.relro_end;
  start &= ~(page - 1);
  const std::uintptr_t end = (f.hi + page - 1) & ~(page - 1);
  for (const char* name : {"__asan_option_detect_stack_use_after_return", "__asan_shadow_memory_dynamic_address"}) {
    const auto at = reinterpret_cast<std::uintptr_t>(dlsym(RTLD_DEFAULT, name));
    if (at >= start && at < end) {
      fail("the sanitizer's variable %s was copied into the program's data, which becomes shared memory; "
           "compile the program with -fPIC (and, with clang, link it with -shared-libsan: clang's default "
           "links the sanitizer's runtime into the program)",
           name);
    }
  }
  return {reinterpret_cast<void*>(start), end - start};
}

}  // namespace squall::tsm::parmacs
