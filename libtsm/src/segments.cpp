// SPDX-License-Identifier: BSD-3-Clause
// TSM segments: a global segment per allocation, its blocks bound to protocols (stache unless
// another was given), every block Invalid on every node (the home's own accesses fault like
// anyone's).
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <string>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include <squall/am.hpp>
#include <squall/collectives.hpp>
#include <squall/error.hpp>
#include <squall/runtime.hpp>
#include <squall/tsm.hpp>
#include <squall/tsm/protocol.hpp>

#include "protocol/binding.hpp"
#include "protocol/registry.hpp"
#include "protocol/sync_points.hpp"
#include "segment_size.hpp"
#include "stache.hpp"

namespace squall::tsm {
namespace {

// A TSM segment: its binding of blocks to protocols, and stache for the blocks no other
// protocol was given (or the protocol options::protocol names, made for it).
struct allocation {
  memory::segment seg;
  std::unique_ptr<detail::stache> stache;
  std::unique_ptr<protocol> named;  // options::protocol when not stache
  std::unique_ptr<detail::binding> blocks;
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

// The protocols a binding uses, each once, in block order.
std::vector<protocol*> protocols_of(const detail::binding& b) {
  std::vector<protocol*> out;
  for (const auto& r : b.ranges()) {
    if (std::find(out.begin(), out.end(), r.p) == out.end()) out.push_back(r.p);
  }
  return out;
}

void check_range(const range_binding& r, std::size_t segment_bytes, std::size_t block_size, const char* api) {
  if (r.p == nullptr) throw usage_error(std::string(api) + ": a range without a protocol");
  if (r.first_byte % block_size != 0 || r.bytes % block_size != 0 || r.bytes == 0) {
    throw usage_error(std::string(api) + ": the range at byte " + std::to_string(r.first_byte) + " of " +
                      std::to_string(r.bytes) + " bytes does not start and end on " + std::to_string(block_size) +
                      "-byte block boundaries");
  }
  if (r.first_byte > segment_bytes || r.bytes > segment_bytes - r.first_byte) {
    throw usage_error(std::string(api) + ": the range at byte " + std::to_string(r.first_byte) + " of " +
                      std::to_string(r.bytes) + " bytes lies outside the segment's " + std::to_string(segment_bytes) +
                      " bytes");
  }
  if (const std::string why = r.p->refuse_block_size(block_size); !why.empty()) {
    throw usage_error(std::string(api) + ": protocol '" + std::string(r.p->name()) + "' cannot run " +
                      std::to_string(block_size) + "-byte blocks: " + why);
  }
}

void check_disjoint(std::span<const range_binding> ranges, const char* api) {
  std::vector<range_binding> sorted(ranges.begin(), ranges.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first_byte < b.first_byte; });
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i].first_byte < sorted[i - 1].first_byte + sorted[i - 1].bytes) {
      throw usage_error(std::string(api) + ": the ranges at bytes " + std::to_string(sorted[i - 1].first_byte) +
                        " and " + std::to_string(sorted[i].first_byte) + " overlap");
    }
  }
}

// A TSM segment: a new range of the segment space, or (`adopted`) pages the process has.
void* make_segment(void* adopted, std::size_t bytes, std::span<const range_binding> ranges, const options& opt,
                   const char* api) {
  squall::detail::require_running(api);
  detail::check_block_size(opt.block_size, api);
  detail::check_segment_size(bytes, opt.block_size, adopted == nullptr, api);
  const std::size_t blocks = detail::blocks_for(bytes, opt.block_size);
  for (const auto& r : ranges) check_range(r, blocks * opt.block_size, opt.block_size, api);
  check_disjoint(ranges, api);

  allocation a;
  if (opt.protocol != "stache") {
    if (!ranges.empty()) {
      throw usage_error(std::string(api) + ": ranges bound to protocols, and options naming '" +
                        std::string(opt.protocol) + "' for the whole segment; give ranges with \"stache\" only");
    }
    a.named = detail::make_named(opt.protocol, api);
    const range_binding whole{0, blocks * opt.block_size, a.named.get()};
    check_range(whole, whole.bytes, opt.block_size, api);
  }
  a.stache = std::make_unique<detail::stache>();
  if (adopted != nullptr) a.stache->adopting();
  a.blocks = std::make_unique<detail::binding>(blocks, a.named ? *a.named : static_cast<protocol&>(*a.stache));
  for (const auto& r : ranges) {
    a.blocks->rebind(r.first_byte / opt.block_size, (r.first_byte + r.bytes) / opt.block_size, *r.p, api);
  }
  // The nodes agree on which protocol runs which blocks before anything is built
  // (memory::allocate checks the sizes and homes): a node running a range under another
  // protocol than the others would end the job at the first message with "a message for
  // protocol ... arrived for block ..., which protocol ... runs here".
  std::uint64_t layout = 0xcbf29ce484222325ull;
  std::string mine;
  for (const auto& r : a.blocks->ranges()) {
    const std::string_view name = r.p == a.stache.get() ? std::string_view("stache") : r.p->name();
    for (const std::uint64_t v : {std::uint64_t{r.first}, std::uint64_t{r.end}, std::hash<std::string_view>{}(name)}) {
      layout = (layout ^ v) * 0x100000001b3ull;
    }
    mine += (mine.empty() ? "" : ", ") + std::string(name) + " for blocks " + std::to_string(r.first) + " to " +
            std::to_string(r.end);
  }
  // Segments of different sizes are memory::allocate's to report.
  const auto agreed = squall::range_over_nodes(std::array<std::uint64_t, 2>{layout, std::uint64_t{blocks}});
  if (agreed[1].same() && !agreed[0].same()) {
    throw usage_error(std::string(api) + " is collective: nodes gave its blocks different protocols (this node: " +
                      mine + ")");
  }
  // Every protocol's state first: messages for the segment may arrive once it exists.
  a.stache->attach(0, blocks, opt.block_size);
  for (const auto& r : a.blocks->ranges()) {
    if (r.p != a.stache.get()) r.p->attach(r.first, r.end, opt.block_size);
  }
  std::vector<memory::block_range> recorded;
  for (const auto& r : a.blocks->ranges()) {
    if (r.p->records_writes()) recorded.push_back({r.first, r.end});
  }
  const memory::segment_options segment_opt{.block_size = opt.block_size,
                                            .homes = opt.homes,
                                            .handler = a.blocks.get(),
                                            .initial = memory::tag::invalid,
                                            .recorded_writes = recorded,
                                            .fill_around_faults = detail::stache::alone_chunk_bytes(),
                                            .home_words = detail::stache::wants_home_words()};
  a.seg = adopted != nullptr ? memory::adopt(adopted, blocks * opt.block_size, segment_opt)
                             : memory::allocate(blocks * opt.block_size, segment_opt);
  a.shared = adopted != nullptr;
  detail::add_live_protocol(*a.stache);
  for (protocol* p : protocols_of(*a.blocks)) {
    if (p != a.stache.get()) detail::add_live_protocol(*p);
    p->started(a.seg);
  }
  void* base = a.seg.base();
  allocations().emplace(base, std::move(a));
  return base;
}

// Collective: every node is done with the segment; its protocols are told, then it goes.
void release(std::map<const void*, allocation>::iterator it) {
  detail::stache::let_go();  // nothing held back for it
  squall::fence();           // no protocol message for it is still on the way
  for (protocol* p : protocols_of(*it->second.blocks)) {
    p->detach();
    detail::remove_live_protocol(*p);
  }
  detail::remove_live_protocol(*it->second.stache);
  memory::free(it->second.seg);  // collective: every node is done with it
  allocations().erase(it);
}

}  // namespace

void* alloc_bytes(std::size_t bytes, const options& opt) { return make_segment(nullptr, bytes, {}, opt, "tsm::alloc"); }

void* alloc_bound(std::size_t bytes, std::span<const range_binding> ranges, const options& opt) {
  return make_segment(nullptr, bytes, ranges, opt, "tsm::alloc_bound");
}

void* detail::alloc_bound(std::size_t bytes, std::span<const range_binding> ranges, const options& opt, const char* api) {
  return make_segment(nullptr, bytes, ranges, opt, api);
}

void bind(void* start, std::size_t bytes, protocol& p) { detail::bind(start, bytes, p, "tsm::bind"); }

void detail::bind(void* start, std::size_t bytes, protocol& p, const char* api) {
  squall::detail::require_running(api);
  const memory::segment s = memory::segment_of(start);
  detail::binding& b = detail::binding_of(s, "tsm::bind");
  const range_binding r{static_cast<std::size_t>(static_cast<std::byte*>(start) - s.base()), bytes, &p};
  const block_index first = r.first_byte / s.block_size(), end = (r.first_byte + bytes) / s.block_size();
  // Every node checks the bind, then the nodes agree before any of them changes anything: a
  // bind one node refuses (it touched the range already, which the others cannot know) is
  // refused on every node, and nodes binding different ranges or protocols are told so.
  // Otherwise the range would run under two protocols, and the job end at the first message
  // with "a message for protocol ... arrived for block ..., which protocol ... runs here".
  std::exception_ptr refused;
  try {
    check_range(r, s.size(), s.block_size(), "tsm::bind");
    b.check_rebind(first, end, "tsm::bind");
  } catch (const usage_error&) {
    refused = std::current_exception();
  }
  const auto agreed = squall::range_over_nodes(std::array<std::uint64_t, 4>{
      r.first_byte, bytes, std::hash<std::string_view>{}(p.name()), refused ? 1u : 0u});
  if (refused) std::rethrow_exception(refused);
  if (agreed[3].highest != 0) {
    throw usage_error("tsm::bind: another node refused this bind (it used blocks of the range already, or "
                      "refused its range or protocol), so no node binds it");
  }
  if (!agreed[0].same() || !agreed[1].same() || !agreed[2].same()) {
    throw usage_error("tsm::bind is collective: nodes bound different ranges or protocols (this node: " +
                      std::to_string(bytes) + " bytes at byte " + std::to_string(r.first_byte) +
                      " of the segment to protocol '" + std::string(p.name()) + "'); no node binds it");
  }
  const bool new_protocol = std::none_of(b.ranges().begin(), b.ranges().end(), [&](const auto& x) { return x.p == &p; });
  p.attach(first, end, s.block_size());
  b.rebind(first, end, p, "tsm::bind");
  p.started(s);
  if (new_protocol) detail::add_live_protocol(p);
  squall::barrier();  // no node touches the range before every node runs it under p
}

protocol& protocol_at(const void* address) {
  const memory::segment s = memory::segment_of(address);
  return detail::binding_of(s, "tsm::protocol_at").protocol_for(s.block_of(address));
}

void detail::too_many_elements(std::size_t count, std::size_t element_size, const char* api) {
  throw usage_error(std::string(api) + ": " + std::to_string(count) + " elements of " + std::to_string(element_size) +
                    " bytes are more bytes than the address space has");
}

void* share(void* address, std::size_t bytes, const options& opt) {
  if (address == nullptr) throw usage_error("tsm::share: a null address");  // else it would allocate
  return make_segment(address, bytes, {}, opt, "tsm::share");
}

void unshare(void* address) {
  squall::detail::require_running("tsm::unshare");
  auto it = allocations().find(address);
  if (it == allocations().end() || !it->second.shared) {
    throw usage_error("tsm::unshare: the address was not given to tsm::share, or was unshared already");
  }
  const memory::segment& seg = it->second.seg;
  // A barrier first: a release-consistent protocol's writes reach their homes there, and
  // stale copies go. Then every node takes a read copy of every block, so that each
  // protocol view holds the latest bytes when the pages become private; nobody writes after
  // the barrier.
  barrier();
  for (memory::block_index b = 0; b < seg.blocks(); ++b) read_fault_in(seg.address_of(b));
  release(it);
}

void free(void* p) { detail::free(p, "tsm::free"); }

void detail::free(void* p, const char* api) {
  if (p == nullptr) return;  // as free(NULL), on every node
  squall::detail::require_running(api);
  auto it = allocations().find(p);
  if (it == allocations().end() || it->second.shared) {
    throw usage_error("tsm::free: the address was not returned by tsm::alloc, or was freed already");
  }
  release(it);
}

counts counts_of(const void* p) {
  const auto* protocol = dynamic_cast<const detail::stache*>(&protocol_at(p));
  if (protocol == nullptr) throw usage_error("tsm::counts_of: the address is run by another protocol than stache");
  return protocol->local_counts();
}

namespace detail {
void before_collective(const char* api) {
  squall::detail::require_running(api);
  std::atomic_signal_fence(std::memory_order_seq_cst);  // no access moves across it
  before_barrier();
}
void after_collective() {
  after_barrier();
  std::atomic_signal_fence(std::memory_order_seq_cst);
}
}  // namespace detail

void barrier() {
  detail::before_collective("tsm::barrier");
  squall::barrier();
  detail::after_collective();
}

}  // namespace squall::tsm
