// SPDX-License-Identifier: BSD-3-Clause
// The UCX transport lives in a module of its own (libsquall-ucx.so), loaded only when a job
// asks for UCX: a process that does not use UCX never loads it, and so never gets UCX's
// memory hooks, which replace mmap, munmap and madvise process-wide (with them a ThreadSanitizer
// build crashed at its first thread, UCX unused). The runtime finds the module beside its own
// library and calls this function of it, once the module's interface stamp matches its own:
// a module from another build (other sources, compiler, build type or sanitizers) is refused
// with a clear error rather than run into undefined behaviour (cmake/interface_stamp.cmake).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "transport/network_transport.hpp"

namespace squall::ucx {

using create_fn = network_transport* (*)(int me, const std::vector<int>* sockets, const std::vector<bool>* same_host,
                                         std::size_t max_packet, const network_hooks* hooks, std::int64_t deadline_ns);
inline constexpr const char* module_name = "libsquall-ucx.so";
inline constexpr const char* create_symbol = "squall_ucx_transport_create";
inline constexpr const char* stamp_symbol = "squall_ucx_interface_stamp";  // const char[]: the stamp

}  // namespace squall::ucx
