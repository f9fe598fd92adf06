// SPDX-License-Identifier: BSD-3-Clause
// A libsquall-ucx.so from another build, for ucx_module_test.sh: its interface stamp is not
// this build's (built with FOREIGN_WITHOUT_STAMP, it has none, as a module older than the
// stamps). The runtime must refuse it before calling anything in it.
#include <cstdio>
#include <cstdlib>

extern "C" {
#ifndef FOREIGN_WITHOUT_STAMP
[[gnu::visibility("default")]] extern const char squall_ucx_interface_stamp[];
const char squall_ucx_interface_stamp[] = "0123456789abcdef (another build)";
#endif
[[gnu::visibility("default")]] void* squall_ucx_transport_create() {
  std::fputs("foreign_ucx_module: called, although its stamp is not this build's\n", stderr);
  std::abort();
}
}
