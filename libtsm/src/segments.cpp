// SPDX-License-Identifier: BSD-3-Clause
// TSM segments: a global segment per allocation with its own stache protocol object,
// every block Invalid on every node (the home's own accesses fault like anyone's).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <memory>

#include <squall/am.hpp>
#include <squall/collectives.hpp>
#include <squall/error.hpp>
#include <squall/tsm.hpp>

#include "segment_size.hpp"
#include "stache.hpp"

namespace squall::tsm {
namespace {

struct allocation {
  memory::segment seg;
  std::unique_ptr<detail::stache> protocol;
  bool shared = false;  // tsm::share, not tsm::alloc
};
// Touched only by the program thread (allocation and freeing are collective calls).
std::map<const void*, allocation>& allocations() {
  static std::map<const void*, allocation> all;
  return all;
}

// A read of one byte, for its fault: it may be a sanitizer's redzone between two globals.
__attribute__((no_sanitize("address"))) void read_fault_in(const void* p) {
  (void)*static_cast<const volatile std::uint8_t*>(p);
}

}  // namespace

namespace {

// A stache segment: a new range of the segment space, or (`adopted`) pages the process has.
void* make_segment(void* adopted, std::size_t bytes, const options& opt, const char* api) {
  detail::check_block_size(opt.block_size, api);
  detail::check_segment_size(bytes, opt.block_size, adopted == nullptr, api);
  const std::size_t blocks = detail::blocks_for(bytes, opt.block_size);
  auto protocol = std::make_unique<detail::stache>(blocks);
  const memory::segment_options segment_opt{
      .block_size = opt.block_size, .homes = opt.homes, .handler = protocol.get(), .initial = memory::tag::invalid};
  const memory::segment seg = adopted != nullptr ? memory::adopt(adopted, blocks * opt.block_size, segment_opt)
                                                 : memory::allocate(blocks * opt.block_size, segment_opt);
  void* base = seg.base();
  allocations().emplace(base, allocation{seg, std::move(protocol), adopted != nullptr});
  return base;
}

}  // namespace

void* alloc_bytes(std::size_t bytes, const options& opt) { return make_segment(nullptr, bytes, opt, "tsm::alloc"); }

void detail::too_many_elements(std::size_t count, std::size_t element_size) {
  throw usage_error("tsm::alloc: " + std::to_string(count) + " elements of " + std::to_string(element_size) +
                    " bytes are more bytes than the address space has");
}

void* share(void* address, std::size_t bytes, const options& opt) {
  if (address == nullptr) throw usage_error("tsm::share: a null address");  // else it would allocate
  return make_segment(address, bytes, opt, "tsm::share");
}

void unshare(void* address) {
  auto it = allocations().find(address);
  if (it == allocations().end() || !it->second.shared) {
    throw usage_error("tsm::unshare: the address was not given to tsm::share, or was unshared already");
  }
  const memory::segment& seg = it->second.seg;
  // Every node takes a read copy of every block, so that each protocol view holds the
  // latest bytes when the pages become private; nobody writes after the barrier.
  for (memory::block_index b = 0; b < seg.blocks(); ++b) read_fault_in(seg.address_of(b));
  detail::stache::let_go();
  squall::fence();
  memory::free(seg);  // collective: private pages with those bytes
  allocations().erase(it);
}

void free(void* p) {
  auto it = allocations().find(p);
  if (it == allocations().end() || it->second.shared) {
    throw usage_error("tsm::free: the address was not returned by tsm::alloc, or was freed already");
  }
  detail::stache::let_go();      // nothing held back for it
  squall::fence();               // no protocol message for it is still on the way
  memory::free(it->second.seg);  // collective: every node is done with it
  allocations().erase(it);
}

counts counts_of(const void* p) {
  const memory::segment s = memory::segment_of(p);
  const auto* protocol = dynamic_cast<const detail::stache*>(s.bound_protocol());
  if (protocol == nullptr) throw usage_error("tsm::counts_of: the address is not in TSM memory");
  return protocol->local_counts();
}

namespace detail {
void before_collective() {
  std::atomic_signal_fence(std::memory_order_seq_cst);  // no access moves across it
  stache::let_go();
}
}  // namespace detail

void barrier() {
  detail::before_collective();
  squall::barrier();
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

}  // namespace squall::tsm
