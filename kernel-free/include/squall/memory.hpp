// SPDX-License-Identifier: BSD-3-Clause
// Global segments and fine-grain access control: Tempest's shared virtual address space
// and per-block access tags whose violations run a protocol's fault handler.
//
//   struct raise_only : squall::memory::protocol {
//     void read_fault(segment s, block_index b) override { s.set_tag(b, tag::read_only); }
//     void write_fault(segment s, block_index b) override { s.set_tag(b, tag::read_write); }
//   } proto;
//   auto s = squall::memory::allocate(1 << 20, {.block_size = 4096, .handler = &proto,
//                                              .initial = tag::invalid});
//   s.base()[0] = std::byte{1};      // write fault on an Invalid block: proto.write_fault
//   squall::memory::free(s);
//
// A segment lives at the same virtual address on every node. Its memory is seen through
// two views: the application view (base(), what the program touches, guarded by the tags)
// and the protocol view (protocol_view(), what handlers read and write; it never faults).
//
// Tags: Invalid (no access), ReadOnly, ReadWrite. An access its block's tag forbids calls
// the bound protocol's read_fault or write_fault with the block; the access is retried when
// the handler returns, and the handler must have raised the tag by then. It must not throw:
// no exception can reach the faulting access, so one that leaves a handler ends the process
// with a message naming the handler, the block, the segment and the exception's what().
// Handlers run one at a time with the node's message handlers. By default they run in the
// faulting thread inside a SIGBUS handler (SQUALL_FAULT_PATH=sigbus), else in a
// fault-handling thread (SQUALL_FAULT_PATH=thread); on the SIGBUS path a handler must not
// allocate, use stdio, or take a lock the interrupted code may hold, and must not touch any
// application view.
// A fault handler may send active messages and wait for replies (am::wait_until, am::call):
// message handlers, the protocol's own included, run while it waits, so the protocol's
// state may change meanwhile. Faults of one node are served one at a time, so a node has
// at most one fault handler in progress. Code that runs under the node lock (message
// handlers, am::wait_until predicates) must not touch an application view: such a fault
// ends the process with a message. The message layer allocates only off the normal path: a
// packet that finds its ring full is queued on the heap, the first am::call needing a new
// reply slot grows the slot table, and collective and bulk messages arriving while the
// handler waits are stored on the heap; a protocol meant for the SIGBUS path uses
// am::send and am::wait_until with preallocated state.
//
// System calls that read or write shared memory (read, pread, readv, recv, recvfrom, recvmsg,
// write, pwrite, writev, send, sendto, sendmsg, fread, fwrite) work whatever the tags: the
// runtime raises the tags first, through the protocol, as a program access would.
//
// Configuration: SQUALL_SEGMENT_BASE (hex address of the segment range, default
// 0x500000000000), SQUALL_SEGMENT_SPACE_GIB (its size, default 1024), SQUALL_FAULT_PATH
// (auto, sigbus or thread).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

namespace squall::memory {

enum class tag : std::uint8_t { invalid, read_only, read_write };
using block_index = std::size_t;

class segment;

// A coherence protocol: what runs when an access violates a block's tag. A handler must
// leave the tag at read_only or above (read_fault) or at read_write (write_fault).
class protocol {
 public:
  virtual ~protocol() = default;
  virtual void read_fault(segment s, block_index b) = 0;
  virtual void write_fault(segment s, block_index b) = 0;
};

// Which node is home to each block of a segment.
class home_policy {
 public:
  static home_policy round_robin();  // block b on node b % nodes
  static home_policy partition();    // contiguous ranges of ceil(blocks / nodes) blocks
  // home_of(b) must give the same node on every node, in 0..nodes-1.
  static home_policy function(std::function<int(block_index)> home_of);

 private:
  friend class segment_builder;
  enum class kind { round_robin, partition, function };
  home_policy(kind k, std::function<int(block_index)> f) : kind_(k), home_of_(std::move(f)) {}
  kind kind_;
  std::function<int(block_index)> home_of_;
};

// The blocks [first, end) of a segment.
struct block_range {
  block_index first = 0, end = 0;
  bool operator==(const block_range&) const = default;
};

struct segment_options {
  std::size_t block_size = 0;  // a power-of-two multiple of the page size; 0 = one page
  home_policy homes = home_policy::round_robin();
  protocol* handler = nullptr;  // may also be bound later with segment::bind
  tag initial = tag::read_write;  // every block's tag at allocation
  // Ranges (ascending, disjoint) whose stores to ReadOnly blocks are recorded instead of
  // faulting: see segment::take_written.
  std::span<const block_range> recorded_writes = {};
  // Bytes (0: off): before a fault on an Invalid block is served, and before the node lock,
  // the pages of the aligned run of this many bytes around it are put in the page cache (zero
  // where never written; bytes there are kept). For a protocol that maps a whole run at its
  // first fault: the pages are then allocated by the faulting thread (or by one of several
  // fault threads, expect_concurrent_faults), not under the fault lock while the node's other
  // threads' faults wait; shmem zeroes each as it is mapped. Rounded to whole blocks.
  std::size_t fill_around_faults = 0;
  // A word per block in its home's memory that the nodes of the home's host update
  // atomically, without the home's processor (segment::home_word): the one-sided directory of
  // a protocol whose readers register themselves. Costs each node a memfd of 8 bytes a block
  // (pages allocated as words are first written) and a mapping per node of its host.
  bool home_words = false;
};

// A handle to a segment (two words, copyable). Every operation on a freed segment throws
// usage_error. Tag changes of one block must not race each other (handlers never do).
class segment {
 public:
  segment() = default;  // a null handle

  std::byte* base() const;  // the application view, at the same address on every node
  std::size_t size() const;  // bytes, a multiple of the block size
  std::size_t block_size() const;
  std::size_t blocks() const;
  int home(block_index b) const;
  block_index block_of(const void* address) const;  // usage_error outside this segment
  std::byte* address_of(block_index b) const;       // in the application view

  tag tag_of(block_index b) const;
  void set_tag(block_index b, tag t) const;
  // The tag of every block of [first, end), all Invalid (usage_error otherwise), set to t in
  // one step: their pages are mapped with one system call, not one per block. Called from a
  // fault handler, the tags are set at once and the pages mapped once the handler returns,
  // outside the node lock, before the faulting thread runs on (another thread touching one
  // meanwhile maps it itself; lowering one of these tags waits for the mapping).
  void set_tags(block_index first, block_index end, tag t) const;
  // Writes `data` (exactly one block) through the protocol view and sets the tag, in one step.
  void install(block_index b, std::span<const std::byte> data, tag t) const;
  // The block's bytes in the protocol view: read and write them whatever the tag.
  std::span<std::byte> protocol_view(block_index b) const;
  // Copies block b's bytes from its home's protocol view into this node's, without the home's
  // processor: when the home is another node of this host (its memory is mapped here
  // read-only), or by a one-sided read over a network transport that offers them (UCX over
  // RDMA or its shared memory, SQUALL_REMOTE_READS; counted as memory.remote_reads), whatever
  // SQUALL_HOME_VIEWS says; false, copying nothing, when neither can (another host over TCP,
  // SQUALL_HOME_VIEWS=0 without such a transport, the home's memory could not be opened). The
  // tag is not changed. The caller's protocol must know the home's copy is the one to read:
  // the home may be writing it meanwhile.
  bool copy_from_home(block_index b) const;
  // Block b's home word (segment_options::home_words): 64 bits, zero at allocation, in the
  // memory of b's home, shared by every node of that host, at the home itself too. Null where
  // this node cannot reach it: the home on another host, SQUALL_HOME_VIEWS=0, a job of one
  // node, a segment made without home words. Wherever it is not null, copy_from_home(b) copies.
  std::atomic<std::uint64_t>* home_word(block_index b) const;
  // Whether `node` (not this one) and this node reach each other's home words: both on this
  // host, with home views and home words.
  bool shares_home_words_with(int node) const;

  void bind(protocol& p) const;
  protocol* bound_protocol() const;

  // Recorded writes. In the ranges allocated with segment_options::recorded_writes, a store
  // to a ReadOnly block does not fault: the kernel lets it through and notes it (userfaultfd's
  // asynchronous write-protect and PAGEMAP_SCAN, Linux 6.7+, on the SIGBUS fault path;
  // SQUALL_RECORD_WRITES=0 turns it off). A protocol that only needs to know at a phase end
  // which blocks were written (an update protocol's home) pays one system call per phase
  // instead of one fault per block, but is not told of the store when it happens. Where writes
  // are not recorded, the store faults as in any other block.
  bool writes_recorded(block_index b) const;
  // The blocks of [first, end) that are ReadWrite or were stored to while ReadOnly since they
  // last became ReadOnly, ascending in `out` (room for end - first blocks); all of them are
  // ReadOnly afterwards. Returns how many. Where writes are not recorded, these are exactly
  // the ReadWrite blocks, so a protocol whose write_fault raises the block to ReadWrite gets
  // the same answer either way. Never allocates.
  std::size_t take_written(block_index first, block_index end, std::span<block_index> out) const;

  bool operator==(const segment&) const = default;

 private:
  friend class segment_builder;
  segment(std::uint32_t slot, std::uint32_t generation) : slot_(slot), generation_(generation) {}
  std::uint32_t slot_ = 0, generation_ = 0;
};

// Collective: every node calls it with the same size and options (the home function and
// handler may be node-local objects). The segment has the same base() on every node.
segment allocate(std::size_t bytes, const segment_options& options = {});

// Collective: makes pages this process already has at `address` (the same on every node:
// the program's own data, say) a segment, keeping their bytes as every node's protocol view.
// `address` must start a page and `bytes` be whole blocks, outside the segment range and
// every segment. Freeing it makes the range private memory again, holding this node's
// protocol view.
segment adopt(void* address, std::size_t bytes, const segment_options& options = {});

// Collective: every node frees the same segment; its memory and address range are returned.
void free(segment s);

// The segment holding `address`; usage_error if no segment does.
segment segment_of(const void* address);

enum class fault_path { sigbus, thread };
// How faults reach handlers in this process (starts the memory layer if it has not started).
fault_path active_fault_path();
// How many threads of this node may fault at once (default 1; at most 64). On the thread path
// as many fault-handling threads then wait for faults, so that the pages of several first
// touches (segment_options::fill_around_faults) are zeroed side by side; protocol handlers
// still run one at a time. Never lowers the number. Starts the memory layer.
void expect_concurrent_faults(int threads);
// The size of the range all segments come from (SQUALL_SEGMENT_SPACE_GIB; a segment larger
// than this can never be allocated). Does not start the memory layer.
std::size_t segment_range_bytes();

}  // namespace squall::memory
