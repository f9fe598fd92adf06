// SPDX-License-Identifier: BSD-3-Clause
// One-sided reads over UCX (network_transport::read_remote): a node maps the memory peers may
// read (ucp_mem_map) and hands them its packed key; a reader unpacks it on its endpoint to that
// node and reads with ucp_get_nbx, progressing the worker until the get completes. Over
// InfiniBand or RoCE the adapter serves the read; over UCX's TCP transport UCX emulates it
// with a message the target's worker answers (its I/O thread or a polling thread, never its
// program).
#include <cstdlib>
#include <cstring>

#include "common/log.hpp"
#include "transport/ucx/ucx_internal.hpp"
#include "transport/ucx/ucx_transport.hpp"

namespace squall::ucx {

// Over UCX's TCP transport a get is a request the target's worker answers, after the wake-up
// of the thread that progresses it: a 4 KiB block took 39-41 us that way against 20 us for a
// TSM read miss by request and grant (tsm_miss, 2 nodes, UCX_TLS=tcp). So reads are offered
// by default only where no lane of the endpoints is TCP (RDMA, or UCX's shared memory);
// SQUALL_REMOTE_READS=1 offers them anyway, 0 never.
bool ucx_transport::offers_remote_reads() const {
  static const int setting = [] {
    const char* v = std::getenv("SQUALL_REMOTE_READS");
    if (v == nullptr || *v == '\0' || std::strcmp(v, "auto") == 0) return -1;
    return std::strcmp(v, "0") == 0 ? 0 : 1;
  }();
  if (setting >= 0) return setting == 1;
  return description_.find("tcp") == std::string::npos;
}

network_transport::registration ucx_transport::register_for_reads(void* base, std::size_t bytes) {
  ucp_mem_map_params_t params{};
  params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  params.address = base;
  params.length = bytes;
  // Pages mapped as they are read, where the fabric can (on-demand paging): a segment is
  // mostly untouched memory (the TSM heaps reserve a GiB each), which pinning would commit.
  params.flags = UCP_MEM_MAP_NONBLOCK;
  ucp_mem_h memh = nullptr;
  if (ucp_mem_map(context_, &params, &memh) != UCS_OK) return {};
  void* packed = nullptr;
  std::size_t size = 0;
  if (ucp_rkey_pack(context_, memh, &packed, &size) != UCS_OK) {
    ucp_mem_unmap(context_, memh);
    return {};
  }
  registration r;
  r.handle = reinterpret_cast<std::uintptr_t>(memh);
  r.key.resize(size);
  std::memcpy(r.key.data(), packed, size);
  ucp_rkey_buffer_release(packed);
  return r;
}

void ucx_transport::deregister(std::uintptr_t handle) {
  if (handle != 0) ucp_mem_unmap(context_, reinterpret_cast<ucp_mem_h>(handle));
}

std::uintptr_t ucx_transport::unpack_key(int node, std::span<const std::byte> key) {
  if (!reaches(node) || key.empty()) return 0;
  ucp_rkey_h rkey = nullptr;
  if (ucp_ep_rkey_unpack(peers_[static_cast<std::size_t>(node)]->ep, key.data(), &rkey) != UCS_OK) return 0;
  return reinterpret_cast<std::uintptr_t>(rkey);
}

void ucx_transport::release_key(std::uintptr_t key) {
  if (key != 0) ucp_rkey_destroy(reinterpret_cast<ucp_rkey_h>(key));
}

bool ucx_transport::read_remote(int node, std::uintptr_t key, std::uintptr_t remote, void* local, std::size_t bytes) {
  if (!reaches(node) || key == 0) return false;
  ucp_request_param_t param{};
  ucs_status_ptr_t request = ucp_get_nbx(peers_[static_cast<std::size_t>(node)]->ep, local, bytes, remote,
                                         reinterpret_cast<ucp_rkey_h>(key), &param);
  if (request == nullptr) return true;  // done at once
  if (UCS_PTR_IS_ERR(request)) return false;
  ucs_status_t status;
  while ((status = ucp_request_check_status(request)) == UCS_INPROGRESS) {
    // Another thread may hold the worker (the I/O thread): it progresses it then.
    progress_once();
  }
  ucp_request_free(request);
  return status == UCS_OK;
}

}  // namespace squall::ucx
