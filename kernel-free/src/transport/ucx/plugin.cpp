// SPDX-License-Identifier: BSD-3-Clause
// The entry point of libsquall-ucx.so (plugin.hpp).
#include "transport/ucx/plugin.hpp"
#include "transport/ucx/interface_stamp.hpp"
#include "transport/ucx/ucx_transport.hpp"

extern "C" [[gnu::visibility("default")]] const char squall_ucx_interface_stamp[] = SQUALL_UCX_INTERFACE_STAMP;

extern "C" [[gnu::visibility("default")]] squall::network_transport* squall_ucx_transport_create(
    int me, const std::vector<int>* sockets, const std::vector<bool>* same_host, std::size_t max_packet,
    const squall::network_hooks* hooks, std::int64_t deadline_ns) {
  return new squall::ucx::ucx_transport(me, *sockets, *same_host, max_packet, *hooks, deadline_ns);
}

// The signature the runtime calls it with.
[[maybe_unused]] static constexpr squall::ucx::create_fn checked_signature = &squall_ucx_transport_create;
