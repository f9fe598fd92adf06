// SPDX-License-Identifier: BSD-3-Clause
// Transparent shared memory: shared arrays that every node reads and writes with plain loads
// and stores, kept sequentially consistent by the stache protocol (home-based directory,
// single writer or many readers, write-invalidate; libtsm/PROTOCOL.md), plus locks handed
// over by message and barriers.
//
//   squall::runtime rt(&argc, &argv);
//   double* x = squall::tsm::alloc<double>(n);           // collective; same address everywhere
//   squall::tsm::lock_array locks(n);                     // collective; one lock per element
//   locks.acquire(i); x[i] += 1.0; locks.release(i);
//   squall::tsm::barrier();
//   double total = squall::tsm::allreduce(x[0], squall::op::sum{});  // collective
//   squall::tsm::free(x);                                 // collective
//
// Memory model: between nodes, a block is readable on many nodes or writable on one, and a
// store needs the only copy. With one program thread per node every load and store to TSM
// memory is therefore sequentially consistent. The program threads of one node share its
// copies through the hardware (no protocol between them), so among them memory behaves as
// the processor's does (x86-64: TSO, a thread may read its own store before others see it),
// and so does the whole: a data-race-free program sees sequential consistency. Locks and
// barriers need no fences of their own: acquire, release and barrier are compiler barriers,
// and the protocol orders the accesses around them.
//
// Two ways to allocate: alloc/free, collective, a segment of its own per call with its own
// block size and homes; and malloc/heap_free, by any node at any time without the others, from
// the shared heap that init (collective) makes.
//
// Protocols: every block runs stache unless another protocol is bound to it (tsm::alloc_bound,
// tsm::bind and the protocol kit in squall/tsm/protocol.hpp; libxsm's protocols), or the
// options name another for the whole segment (options::protocol: tsm::init's heap too). The
// memory model above is stache's; another protocol states its own.
//
// Threads: any number of a node's threads may touch TSM memory, use lock arrays and call
// malloc and heap_free at once (the node's fault path serves their misses; node 0's handler
// keeps the heap's free list); the collectives (alloc, free, barrier,
// allreduce, lock_array creation) are called by one thread of each node.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

#include <squall/collectives.hpp>
#include <squall/memory.hpp>

namespace squall::tsm {

// The largest block (coherence unit): 64 MiB. Each miss moves a whole block, the protocol
// keeps copies of one, and a segment takes its bytes plus up to 15 blocks (its colour) of the
// segment range, aligned to the block: a 2 GiB block for 40 bytes took 31 s and 8 GB.
inline constexpr std::size_t max_block_size = std::size_t{64} << 20;

struct options {
  // Coherence unit: a power of two from one page (4096 bytes) to max_block_size (64 MiB);
  // usage_error for any other.
  std::size_t block_size = 4096;
  memory::home_policy homes = memory::home_policy::round_robin();
  // The protocol of every block, by name: "stache", or one registered with
  // register_protocol_maker (squall/tsm/protocol.hpp), such as libxsm's "multiple-writer".
  // usage_error for a name nobody registered, listing the known ones.
  std::string_view protocol = "stache";
};

// Collective: every node calls it with the same size and options; returns the same address
// on every node. The memory starts zeroed.
// usage_error for a size that cannot fit the segment range (SQUALL_SEGMENT_SPACE_GIB), or
// whose protocol state (about 25 bytes a block per node) would take more than a quarter of
// the host's memory; nothing is built for it.
void* alloc_bytes(std::size_t bytes, const options& opt = {});
namespace detail {
// usage_error, naming `api` (the caller's call: "tsm::alloc", "xsm::alloc", ...): count elements of
// element_size bytes overflow the address space.
[[noreturn]] void too_many_elements(std::size_t count, std::size_t element_size, const char* api);
// usage_error, naming `api`, unless `block_size` is a power of two from 4096 bytes to
// max_block_size.
void check_block_size(std::size_t block_size, const char* api);
}
template <class T>
T* alloc(std::size_t count, const options& opt = {}) {
  static_assert(std::is_trivially_copyable_v<T>, "squall::tsm::alloc: T must be trivially copyable");
  if (count > SIZE_MAX / sizeof(T)) detail::too_many_elements(count, sizeof(T), "tsm::alloc");
  return static_cast<T*>(alloc_bytes(count * sizeof(T), opt));
}
// Collective: frees what alloc returned (usage_error for anything else, or twice); nullptr
// does nothing, as for free().
void free(void* p);

// Collective: makes pages this process already has at `address` (the same on every node,
// such as the program's own data and bss) TSM memory from now on, starting from the bytes
// each block's home has there. `bytes` is rounded up to whole blocks, which must be pages
// the program owns. unshare (collective) makes them private again, each node keeping the
// latest bytes of every block.
void* share(void* address, std::size_t bytes, const options& opt = {});
void unshare(void* address);

// Collective: makes the shared heap (SQUALL_TSM_HEAP_MIB, default 1024) with these options; its
// blocks, and the placed heap's, run options::protocol (one protocol object for each heap).
void init(const options& opt = {});
bool initialized();
// Any node, any time after init: shared memory at the same address on every node, zeroed
// when first allocated. usage_error when the heap is full.
void* malloc(std::size_t bytes);
// The same, with every block of it homed at node `home`: from the placed heap, a part of
// the heap's size divided among the nodes.
void* malloc(std::size_t bytes, int home);
// usage_error for an address malloc did not return, or freed twice; nullptr does nothing, as
// for free().
void heap_free(void* p);

// Protocol counts of this node for the segment holding p (usage_error if none does).
struct counts {
  std::uint64_t read_misses = 0;     // read faults on Invalid blocks
  std::uint64_t write_misses = 0;    // write faults on Invalid blocks
  std::uint64_t upgrades = 0;        // write faults on ReadOnly blocks
  std::uint64_t retries = 0;         // a granted block was taken away before the access ran
  std::uint64_t invalidations_received = 0;  // copies dropped or downgraded for a home
  std::uint64_t writebacks = 0;      // of those, ReadWrite copies whose bytes went home
  std::uint64_t invalidations_sent = 0;      // by this node as home
  std::uint64_t requests_served = 0;         // by this node as home
  std::uint64_t requests_deferred = 0;       // arrived while their block was busy
  std::uint64_t fetched = 0;                 // read copies asked for by tsm::fetch
  std::uint64_t claimed_ahead = 0;  // blocks the home took ReadWrite after its own fault on the one before
  std::uint64_t exclusive_grants = 0;  // by this node as home: reads granted exclusively (E)
  std::uint64_t silent_upgrades = 0;   // writes to blocks granted exclusively: no message
  std::uint64_t one_sided_reads = 0;   // read misses copied from the home's memory: no message
  std::uint64_t reopened = 0;  // as home: written blocks lowered to ReadOnly at a barrier for such reads
  std::uint64_t zero_grants = 0;  // as home: grants of blocks nobody wrote yet, without their (zero) bytes
};
counts counts_of(const void* p);

// Locks: collective creation of `count` locks, lock i homed at node i % nodes, which hands it
// to waiting nodes in the order their requests arrived. A node keeps a lock it released until
// another node asks for it, and takes it again meanwhile without a message; among the
// threads of a node a lock passes without a message too, until another node asks. A lock is
// held by a thread. Each costs a few words on every node and at its home (usage_error for a
// count whose state would take more than a quarter of the host's memory).
class lock_array {
 public:
  explicit lock_array(std::size_t count);  // collective
  // Collective; after squall::finalize only this node's part goes (the runtime has stopped,
  // and with it every lock: held ones need no release).
  ~lock_array();
  lock_array(const lock_array&) = delete;
  lock_array& operator=(const lock_array&) = delete;

  // Waits; usage_error if this thread already holds lock i. A wait longer than
  // SQUALL_WAIT_NOTICE_S (60 s) says so once on standard error, naming the lock.
  void acquire(std::size_t i);
  void release(std::size_t i);  // usage_error unless this thread holds lock i
  std::size_t size() const { return count_; }

 private:
  std::size_t count_;
  std::uint32_t id_;
};

// Fetching ahead: asks at once for a read copy of every block of the ranges that this node
// cannot read (blocks run by a protocol other than stache are left alone) and returns when
// all have arrived, so that the reads that follow do not fault one block and one round trip
// at a time (up to 16 requests are in flight). A hint, not a lock: another node's write may
// take a copy away again before it is read (the read then faults as usual). Program code
// only (it waits), not collective. usage_error for a range outside TSM memory. Counted as
// counts::fetched, not as misses.
struct byte_range {
  const void* address;
  std::size_t bytes;
};
void fetch(std::span<const byte_range> ranges);

// Collective: returns when every node has called it.
void barrier();

// Collective: every node's `value` combined by `op` (squall::op::sum, min, max, or a user
// operator, as squall::allreduce), the same result on every node. Orders memory like
// barrier(): every TSM access before it, on any node, comes before every access after it.
namespace detail {
void before_collective(const char* api);  // usage_error naming `api` unless the runtime runs
void after_collective();
}  // namespace detail
template <class T, class Op>
T allreduce(T value, Op op) {
  detail::before_collective("tsm::allreduce");
  const T result = squall::allreduce(value, op);
  detail::after_collective();
  return result;
}

}  // namespace squall::tsm
