// SPDX-License-Identifier: BSD-3-Clause
// The segment API: collective allocation and freeing, and the per-block operations.
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include <squall/collectives.hpp>
#include <squall/error.hpp>
#include <squall/memory.hpp>
#include <squall/runtime.hpp>

#include "common/descriptor_failure.hpp"
#include "common/log.hpp"
#include "memory/address_space.hpp"
#include "memory/counters.hpp"
#include "memory/deferred_maps.hpp"
#include "memory/fault_service.hpp"
#include "memory/home_views.hpp"
#include "memory/layer.hpp"
#include "memory/page_tables.hpp"
#include "memory/segment_builder.hpp"
#include "memory/thread_path.hpp"
#include "memory/uffd_abi.hpp"
#include "memory/write_recording.hpp"
#include "runtime/node.hpp"
#include "transport/network_transport.hpp"

namespace squall::memory {
namespace {

using detail::segment_state;

std::size_t page_size() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }

bool is_block_size(std::size_t b) {
  return b >= page_size() && (b & (b - 1)) == 0;  // page sizes are powers of two
}

// Every node's values, element-wise: min in `lo`, max in `hi` (one allreduce).
void spread(std::span<const std::uint64_t> values, std::vector<std::uint64_t>& lo,
            std::vector<std::uint64_t>& hi) {
  std::vector<std::uint64_t> both(2 * values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    both[i] = values[i];
    both[values.size() + i] = ~values[i];
  }
  allreduce(std::span<const std::uint64_t>(both), std::span<std::uint64_t>(both), op::min{});
  lo.assign(both.begin(), both.begin() + static_cast<std::ptrdiff_t>(values.size()));
  hi.resize(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) hi[i] = ~both[values.size() + i];
}

std::uint64_t hash_of(const std::vector<int>& table) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a
  for (int v : table) h = (h ^ static_cast<std::uint32_t>(v)) * 1099511628211ull;
  return h;
}

// A home function's first answer outside 0..nodes-1, as a message ("" if none).
std::string bad_home(const segment_state& s) {
  for (block_index b = 0; b < s.home_table.size(); ++b) {
    const int h = s.home_table[b];
    if (h < 0 || h >= s.nodes) {
      return format("the home function gave node %d for block %zu; nodes are 0..%d", h, b, s.nodes - 1);
    }
  }
  return {};
}

// `keep` (an adopted range): the memfd starts with the bytes now at `address`. They are
// copied by the kernel (pwrite through a raw system call), so a sanitizer's poisoned
// redzones between the program's globals are not read by instrumented code.
void register_blocks(const segment_state& s, block_index first, block_index end, int uffd) {
  uffdio_register r{};
  r.range = {reinterpret_cast<__u64>(s.app_block(first)), (end - first) * s.block_size};
  r.mode = UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_MINOR | UFFDIO_REGISTER_MODE_WP;
  if (::ioctl(uffd, UFFDIO_REGISTER, &r) != 0) {
    fatal("cannot register a segment with userfaultfd (MISSING, MINOR and write-protect on "
          "shared memory): %s",
          std::strerror(errno));
  }
  constexpr std::uint64_t needed = (1ull << _UFFDIO_CONTINUE) | (1ull << _UFFDIO_WRITEPROTECT);
  if ((r.ioctls & needed) != needed) {
    fatal("userfaultfd offers no UFFDIO_CONTINUE or UFFDIO_WRITEPROTECT on shared memory; this "
          "kernel is too old or built without CONFIG_PTE_MARKER_UFFD_WP (Linux 5.19+ needed)");
  }
}

void map_views(segment_state& s, std::byte* address, bool keep) {
  s.memfd = ::memfd_create("squall-segment", MFD_CLOEXEC);
  if (s.memfd < 0) fatal("memfd_create for a segment failed: %s", descriptor_failure(errno).c_str());
  if (::ftruncate(s.memfd, static_cast<off_t>(s.bytes)) != 0) {
    fatal("cannot size a segment's memfd to %zu bytes: %s", s.bytes, std::strerror(errno));
  }
  if (keep && ::syscall(SYS_pwrite64, s.memfd, address, s.bytes, 0) != static_cast<long>(s.bytes)) {
    fatal("cannot copy the %zu bytes at %p into a segment: %s", s.bytes, static_cast<void*>(address),
          std::strerror(errno));
  }
  if (::mmap(address, s.bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, s.memfd, 0) == MAP_FAILED) {
    fatal("cannot map a segment's application view at %p: %s", static_cast<void*>(address),
          detail::mapping_failure(errno).c_str());
  }
  void* proto = ::mmap(nullptr, s.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, s.memfd, 0);
  if (proto == MAP_FAILED) fatal("cannot map a segment's protocol view: %s", detail::mapping_failure(errno).c_str());
  s.app = address;
  s.proto = static_cast<std::byte*>(proto);
  // Blocks in recorded ranges go to the recording userfaultfd, the rest to the node's own.
  block_index next = 0;
  for (const block_range& r : s.recorded) {
    if (r.first > next) register_blocks(s, next, r.first, s.uffd);
    register_blocks(s, r.first, r.end, s.recording_uffd);
    next = r.end;
  }
  if (next < s.blocks) register_blocks(s, next, s.blocks, s.uffd);
}

// An adopted range: whole blocks of mapped, writable pages outside every segment.
void check_adoptable(detail::layer& l, std::byte* address, std::size_t bytes, std::size_t block_size,
                     const char* api) {
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  if (a % page_size() != 0 || bytes % block_size != 0) {
    throw usage_error(format("%s: %p + %zu bytes is not whole blocks of %zu bytes starting on a page", api,
                             static_cast<void*>(address), bytes, block_size));
  }
  if (l.space.contains(address) || l.space.contains(address + bytes - 1) ||
      (a < l.space.base() && a + bytes > l.space.base())) {
    throw usage_error(format("%s: %p + %zu bytes overlaps the segment range", api, static_cast<void*>(address), bytes));
  }
  for (std::size_t off = 0; off < bytes; off += page_size()) {
    if (detail::find_segment(address + off) != nullptr) {
      throw usage_error(format("%s: %p is in a segment already", api, static_cast<void*>(address + off)));
    }
  }
}

// An adopted range becomes private memory again, holding this node's protocol view.
void return_to_private(const segment_state& s) {
  if (::mmap(s.app, s.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ||
      ::syscall(SYS_pread64, s.memfd, s.app, s.bytes, 0) != static_cast<long>(s.bytes)) {
    fatal("cannot return the adopted range at %p to private memory: %s", static_cast<void*>(s.app),
          std::strerror(errno));
  }
}

void check_block(const segment_state& s, block_index b, const char* api) {
  if (b >= s.blocks) {
    throw usage_error(format("%s: block %zu is out of range (the segment has %zu blocks)", api, b, s.blocks));
  }
}

void check_tag(tag t, const char* api) {
  if (t != tag::invalid && t != tag::read_only && t != tag::read_write) {
    throw usage_error(format("%s: %d is not a tag", api, static_cast<int>(t)));
  }
}

}  // namespace

segment_state& segment_builder::state(segment h, const char* api) {
  if (h.slot_ == 0 || h.slot_ >= detail::max_segments) {
    throw usage_error(format("%s on a null segment handle", api));
  }
  segment_state& s = detail::slot(h.slot_);
  if (!s.live.load(std::memory_order_acquire) || s.generation != h.generation_) {
    throw usage_error(format("%s on a segment that was freed", api));
  }
  return s;
}

namespace {

void check_recorded_ranges(std::span<const block_range> ranges, std::size_t blocks, const char* api) {
  block_index next = 0;
  for (const block_range& r : ranges) {
    if (r.first < next || r.first >= r.end || r.end > blocks) {
      throw usage_error(format("%s: recorded_writes range of blocks %zu..%zu is empty, out of order, overlaps the one "
                               "before or lies beyond the segment's %zu blocks",
                               api, r.first, r.end, blocks));
    }
    next = r.end;
  }
}

// Where a segment starts past its reservation: segments allocated one after another would
// otherwise lie exactly their size apart, and a loop over two of them (a stencil reading one
// grid and writing another, both 32 MiB) then ran 15-25% slower than over the same arrays
// from malloc, which lie a page further apart: the accesses of the two arrays at one index
// contend for the same cache and TLB sets (two 2048 x 2048 grids, one node of two workers:
// 70-81 ms against 52-64 ms with 64 KiB more between them, and 59-67 ms on 2 pthreads). So
// each slot's segment starts 1-15 steps of 64 KiB (or of its alignment, if larger) into its
// reservation, as jemalloc offsets large allocations (its cache-oblivious option). By slot, so
// that every node computes the same and a segment freed and made again lands where it was.
std::size_t colour_of(std::uint32_t slot, std::size_t alignment) {
  const std::size_t step = std::max<std::size_t>(alignment, std::size_t{64} << 10);
  return step * (slot * 5 % 15 + 1);
}

// allocate and adopt: `adopted` is the range to keep (adopt) or nullptr (a range of the
// segment space).
segment create(std::size_t bytes, const segment_options& options, std::byte* adopted, const char* api) {
  rt::require(api);
  const std::size_t block_size = options.block_size == 0 ? page_size() : options.block_size;
  if (!is_block_size(block_size)) {
    throw usage_error(format("%s: block size %zu is not a power-of-two multiple of the page size (%zu)",
                             api, block_size, page_size()));
  }
  if (bytes == 0) throw usage_error(format("%s: a segment needs at least one byte", api));
  check_tag(options.initial, api);
  detail::layer& l = detail::started_layer();
  if (adopted == nullptr && bytes > l.space.bytes()) {
    throw usage_error(format("%s: %zu bytes exceed the segment range (%zu bytes, SQUALL_SEGMENT_SPACE_GIB)",
                             api, bytes, l.space.bytes()));
  }
  if (adopted != nullptr) check_adoptable(l, adopted, bytes, block_size, api);
  segment_state proposal;  // homes are computed here so that every node can check them
  proposal.bytes = (bytes + block_size - 1) / block_size * block_size;
  proposal.block_size = block_size;
  proposal.blocks = proposal.bytes / block_size;
  proposal.nodes = squall::nodes();
  segment_builder::set_homes(proposal, options.homes);
  check_recorded_ranges(options.recorded_writes, proposal.blocks, api);
  const std::string home_problem = bad_home(proposal);

  const std::uint64_t mine[] = {bytes, block_size, static_cast<std::uint64_t>(proposal.homes),
                                static_cast<std::uint64_t>(options.initial), hash_of(proposal.home_table),
                                home_problem.empty() ? 0u : 1u, reinterpret_cast<std::uintptr_t>(adopted)};
  std::vector<std::uint64_t> lo, hi;
  spread(mine, lo, hi);
  if (hi[5] != 0) {
    throw usage_error(format("%s: %s", api, home_problem.empty() ? "another node's home function gave an invalid node"
                                                                 : home_problem.c_str()));
  }
  if (lo[6] != hi[6]) {
    throw usage_error(format("%s: nodes adopt different addresses (this node %p): the program's memory is not "
                             "at the same address on every node (address-space randomisation?)",
                             api, static_cast<void*>(adopted)));
  }
  if (lo != hi) {
    throw usage_error(format("%s is collective: nodes asked for different segments (this node: %zu bytes, "
                             "block size %zu; the home function and initial tag must agree too)",
                             api, bytes, block_size));
  }
  const std::uint32_t index = detail::unused_slot();
  if (index == 0) throw usage_error(format("%s: more than %u live segments", api, detail::max_segments - 1));
  const std::size_t colour = adopted != nullptr ? 0 : colour_of(index, std::max(block_size, page_size()));
  std::byte* reserved = adopted != nullptr ? adopted : l.space.take(colour + proposal.bytes, std::max(block_size, page_size()));
  if (reserved == nullptr) {
    throw usage_error(format("%s: no room for %zu bytes in the segment range (SQUALL_SEGMENT_SPACE_GIB)", api,
                             proposal.bytes));
  }
  std::byte* address = reserved + colour;
  segment_state& s = detail::slot(index);
  s.colour = colour;
  s.retiring.store(false, std::memory_order_relaxed);
  s.adopted = adopted != nullptr;
  s.bytes = proposal.bytes;
  s.block_size = block_size;
  s.blocks = proposal.blocks;
  s.block_shift = static_cast<unsigned>(__builtin_ctzll(block_size));
  s.nodes = proposal.nodes;
  s.homes = proposal.homes;
  s.blocks_per_node = proposal.blocks_per_node;
  s.home_table = std::move(proposal.home_table);
  // PTEs start absent: blocks tagged ReadOnly or ReadWrite are mapped on first touch.
  s.tags = std::make_unique<std::atomic<tag>[]>(s.blocks);
  for (block_index b = 0; b < s.blocks; ++b) s.tags[b].store(options.initial, std::memory_order_relaxed);
  s.handler.store(options.handler, std::memory_order_relaxed);
  s.generation = l.next_generation++;
  s.uffd = l.uffd.fd;
  s.recording_uffd = l.recorder.uffd;
  s.fill_blocks = options.fill_around_faults / block_size;
  s.recorded.clear();
  if (l.recorder.active()) s.recorded.assign(options.recorded_writes.begin(), options.recorded_writes.end());
  map_views(s, address, s.adopted);
  detail::open_home_views(s, options.home_words);
  detail::publish(index);
  barrier();  // no node hears of the segment from another before it exists here
  detail::home_views_opened(s);  // every peer has mapped what it maps of this node's
  return segment_builder::handle(s);
}

}  // namespace

segment allocate(std::size_t bytes, const segment_options& options) {
  return create(bytes, options, nullptr, "memory::allocate");
}

segment adopt(void* address, std::size_t bytes, const segment_options& options) {
  if (address == nullptr) throw usage_error("memory::adopt: a null address");
  return create(bytes, options, static_cast<std::byte*>(address), "memory::adopt");
}

void free(segment h) {
  constexpr const char* api = "memory::free";
  rt::require(api);
  segment_state& s = segment_builder::state(h, api);
  // From here no fault of this node on the segment is being served, nor a late report of one
  // served later (the program has stopped using it), so once every node has said so (the
  // spread) no protocol message about it is still on its way.
  detail::retire_from_faults(s);
  const std::uint64_t mine[] = {reinterpret_cast<std::uintptr_t>(s.app), s.generation};
  std::vector<std::uint64_t> lo, hi;
  spread(mine, lo, hi);  // also the barrier: every node has stopped using the segment
  if (lo != hi) {
    s.retiring.store(false, std::memory_order_relaxed);
    throw usage_error(format("%s is collective: nodes freed different segments", api));
  }
  detail::layer& l = *detail::running_layer();
  {
    detail::faults_held_off no_fault_in_flight;  // none is served into the range being unmapped
    s.live.store(false, std::memory_order_release);
    if (s.adopted) {
      return_to_private(s);
    } else {
      l.space.give_back(s.app - s.colour, s.colour + s.bytes);  // unmaps the application view, unregistering it
    }
  }
  detail::close_home_views(s);
  ::munmap(s.proto, s.bytes);
  ::close(s.memfd);
  s.tags.reset();
  s.home_table = {};
  s.recorded = {};
  s.handler.store(nullptr, std::memory_order_relaxed);
  s.app = s.proto = nullptr;
  s.bytes = 0;
}

segment segment_of(const void* address) {
  detail::segment_state* s = detail::running_layer() ? detail::find_segment(address) : nullptr;
  if (s == nullptr) throw usage_error(format("address %p is outside every shared segment", address));
  return segment_builder::handle(*s);
}

fault_path active_fault_path() { return detail::started_layer().path; }

void expect_concurrent_faults(int threads) {
  if (threads < 1 || threads > 64) {
    throw usage_error(format("memory::expect_concurrent_faults: %d threads (1 to 64)", threads));
  }
  detail::layer& l = detail::started_layer();
  if (l.path == fault_path::thread) detail::start_fault_threads(l.uffd.fd, threads);
}

std::size_t segment_range_bytes() { return detail::configured_range_bytes(); }

std::byte* segment::base() const { return segment_builder::state(*this, "segment::base").app; }
std::size_t segment::size() const { return segment_builder::state(*this, "segment::size").bytes; }
std::size_t segment::block_size() const { return segment_builder::state(*this, "segment::block_size").block_size; }
std::size_t segment::blocks() const { return segment_builder::state(*this, "segment::blocks").blocks; }

int segment::home(block_index b) const {
  const auto& s = segment_builder::state(*this, "segment::home");
  check_block(s, b, "segment::home");
  return s.home(b);
}

block_index segment::block_of(const void* address) const {
  const auto& s = segment_builder::state(*this, "segment::block_of");
  if (!s.holds(address)) {
    throw usage_error(format("segment::block_of: address %p is outside the segment at %p (%zu bytes)", address,
                             static_cast<void*>(s.app), s.bytes));
  }
  return s.block_of(address);
}

std::byte* segment::address_of(block_index b) const {
  const auto& s = segment_builder::state(*this, "segment::address_of");
  check_block(s, b, "segment::address_of");
  return s.app_block(b);
}

tag segment::tag_of(block_index b) const {
  const auto& s = segment_builder::state(*this, "segment::tag_of");
  check_block(s, b, "segment::tag_of");
  return s.tags[b].load(std::memory_order_acquire);
}

void segment::set_tag(block_index b, tag t) const {
  auto& s = segment_builder::state(*this, "segment::set_tag");
  check_block(s, b, "segment::set_tag");
  check_tag(t, "segment::set_tag");
  const tag from = s.tags[b].load(std::memory_order_relaxed);
  if (from == t) return;
  detail::change_tag(s.uffd_of(b), s, b, from, t);
  detail::count(detail::tag_changes);
}

void segment::set_tags(block_index first, block_index end, tag t) const {
  constexpr const char* api = "segment::set_tags";
  auto& s = segment_builder::state(*this, api);
  if (first > end || end > s.blocks) {
    throw usage_error(format("%s: blocks %zu to %zu are out of range (the segment has %zu blocks)", api, first, end, s.blocks));
  }
  check_tag(t, api);
  for (block_index b = first; b < end; ++b) {
    if (s.tags[b].load(std::memory_order_relaxed) != tag::invalid) {
      throw usage_error(format("%s: block %zu is not Invalid", api, b));
    }
  }
  if (t == tag::invalid) return;
  // One mapping call per run of blocks on one userfaultfd (ranges with recorded writes have
  // their own); in a fault handler, after it, outside its locks (deferred_maps.hpp), the tags
  // stored first.
  for (block_index run = first; run < end;) {
    const int uffd = s.uffd_of(run);
    block_index stop = run + 1;
    while (stop < end && s.uffd_of(stop) == uffd) ++stop;
    for (block_index b = run; b < stop; ++b) s.tags[b].store(t, std::memory_order_release);
    if (!detail::defer_mapping(s, uffd, run, stop - run, t == tag::read_only)) {
      detail::map_blocks(uffd, s, run, stop - run, t == tag::read_only);
    }
    run = stop;
  }
  detail::count(detail::tag_changes, end - first);
}

void segment::install(block_index b, std::span<const std::byte> data, tag t) const {
  auto& s = segment_builder::state(*this, "segment::install");
  check_block(s, b, "segment::install");
  check_tag(t, "segment::install");
  if (data.size() != s.block_size) {
    throw usage_error(format("segment::install: %zu bytes given for a block of %zu", data.size(), s.block_size));
  }
  std::memcpy(s.proto_block(b), data.data(), data.size());
  detail::change_tag(s.uffd_of(b), s, b, s.tags[b].load(std::memory_order_relaxed), t);
  detail::count(detail::installs);
}

std::span<std::byte> segment::protocol_view(block_index b) const {
  const auto& s = segment_builder::state(*this, "segment::protocol_view");
  check_block(s, b, "segment::protocol_view");
  return {s.proto_block(b), s.block_size};
}

void segment::bind(protocol& p) const {
  segment_builder::state(*this, "segment::bind").handler.store(&p, std::memory_order_release);
}

bool segment::copy_from_home(block_index b) const {
  auto& s = segment_builder::state(*this, "segment::copy_from_home");
  check_block(s, b, "segment::copy_from_home");
  const auto home = static_cast<std::size_t>(s.home(b));
  if (home < s.home_views.size() && s.home_views[home] != nullptr) {
    std::memcpy(s.proto_block(b), s.home_views[home] + s.offset_of(b), s.block_size);
    detail::count(detail::home_copies);
    return true;
  }
  rt::node_runtime* nd = rt::current();
  if (home >= s.read_keys.size() || s.read_keys[home] == 0 || nd == nullptr || !nd->net ||
      !nd->net->read_remote(static_cast<int>(home), s.read_keys[home], s.read_bases[home] + s.offset_of(b),
                            s.proto_block(b), s.block_size)) {
    return false;
  }
  detail::count(detail::home_copies);
  detail::count(detail::remote_reads);
  return true;
}

std::atomic<std::uint64_t>* segment::home_word(block_index b) const {
  const auto& s = segment_builder::state(*this, "segment::home_word");
  check_block(s, b, "segment::home_word");
  const auto home = static_cast<std::size_t>(s.home(b));
  return home < s.home_words.size() && s.home_words[home] != nullptr ? s.home_words[home] + b : nullptr;
}

bool segment::shares_home_words_with(int node) const {
  const auto& s = segment_builder::state(*this, "segment::shares_home_words_with");
  const auto n = static_cast<std::size_t>(node);
  rt::node_runtime* nd = rt::current();
  return n < s.home_words.size() && s.home_words[n] != nullptr && (nd == nullptr || node != nd->me);
}

bool segment::writes_recorded(block_index b) const {
  const auto& s = segment_builder::state(*this, "segment::writes_recorded");
  check_block(s, b, "segment::writes_recorded");
  return s.records(b);
}

std::size_t segment::take_written(block_index first, block_index end, std::span<block_index> out) const {
  auto& s = segment_builder::state(*this, "segment::take_written");
  if (first > end || end > s.blocks) {
    throw usage_error(format("segment::take_written: blocks %zu..%zu are not a range of the segment's %zu", first, end,
                             s.blocks));
  }
  if (out.size() < end - first) {
    throw usage_error(format("segment::take_written: room for %zu blocks, not the %zu of the range", out.size(),
                             end - first));
  }
  return detail::take_written(s, first, end, out.data());
}

protocol* segment::bound_protocol() const {
  return segment_builder::state(*this, "segment::bound_protocol").handler.load(std::memory_order_acquire);
}

}  // namespace squall::memory
