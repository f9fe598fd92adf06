// SPDX-License-Identifier: BSD-3-Clause
// The protocol kit: what every coherence protocol on TSM memory shares. Stache (libtsm's
// own protocol) is written on it, and so are libxsm's protocols and a user's own.
//
//   class my_protocol final : public squall::tsm::protocol {
//    public:
//     std::string_view name() const override { return "my"; }
//     void attach(block_index first, block_index end, std::size_t block_size) override;  // state
//     void read_fault(segment s, block_index b) override;   // on the program's side
//     void write_fault(segment s, block_index b) override;
//     void on_request(segment s, block_index b, int from, bool write);  // a message handler
//   };
//   squall::tsm::send<&my_protocol::on_request>(s.home(b), s, b, true);
//
// A protocol object runs a range of blocks of one segment (bound where the memory is
// allocated: tsm::alloc_bound here, xsm::alloc in libxsm); one segment may hold several
// ranges under different protocols. The kit provides:
//
// - fault dispatch: an access its block's tag forbids calls the fault handler of the
//   protocol bound to that block (squall/memory.hpp has the rules a fault handler follows);
// - routed messages (squall/tsm/messages.hpp): a handler is a member function of the
//   protocol class, and a message reaches the object that runs its block on the receiving
//   node; one for a freed segment, or a block now run by another protocol class, ends the
//   job with a message naming both (never an unchecked cast);
// - block transfer (the same header): a block's bytes sent with a protocol message, in
//   parts for blocks larger than one message, landing in the protocol view;
// - a home directory (squall/tsm/directory.hpp): owner, sharers, the request in progress
//   and the requests waiting behind it;
// - synchronisation points: the program's barriers, lock acquires and releases (tsm and
//   PARMACS) call every live protocol's hooks on the program thread, in allocation order;
// - exact counters (protocol_counter below): per protocol object, and a total per name in
//   the statistics table.
//
// Every message a protocol sends is counted by fence() and by lost-node detection like any
// program message.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <squall/memory.hpp>
#include <squall/stats.hpp>
#include <squall/tsm.hpp>

namespace squall::tsm {

using memory::block_index;
using memory::segment;
using memory::tag;

class protocol {
 public:
  virtual ~protocol() = default;

  // A short name for messages and counters ("stache", "migratory", ...).
  virtual std::string_view name() const = 0;

  // usage_error text when this protocol cannot run blocks of `block_size` bytes; empty if
  // it can. Checked before anything is built.
  virtual std::string refuse_block_size(std::size_t block_size) const {
    (void)block_size;
    return {};
  }

  // Collective, once per range bound, before the segment exists: the protocol will run
  // blocks [first, end) of `block_size` bytes, every block starting Invalid on every node,
  // its bytes zeroed on every node (or, for memory tsm::share adopted, each node's protocol
  // view holding that node's own bytes there, of which the home's are the block's). Allocate
  // all state here: other nodes' messages for the blocks may arrive as soon as the segment
  // exists, and handlers may run on the SIGBUS path, where nothing may allocate.
  virtual void attach(block_index first, block_index end, std::size_t block_size) = 0;
  // Once the segment exists (messages for it may have been handled already).
  virtual void started(segment s) { (void)s; }
  // Collective, when the segment is freed: no message for it is still on the way.
  virtual void detach() {}

  // The program touched block b against its tag (see squall/memory.hpp for the rules).
  virtual void read_fault(segment s, block_index b) = 0;
  virtual void write_fault(segment s, block_index b) = 0;
  // Whether this protocol lets the kernel record stores to its ReadOnly blocks instead of
  // faulting (memory::segment_options::recorded_writes): true only for a protocol that never
  // needs to hear of such a store when it happens, and asks segment::take_written at its phase
  // ends. Asked for the ranges bound when the memory is allocated; a range bound later faults.
  virtual bool records_writes() const { return false; }

  // Synchronisation points, on the program thread with no lock held; a hook may send and
  // wait. Barrier: tsm's barrier and allreduce, and PARMACS BARRIER (before_barrier runs
  // before this node arrives, after_barrier once every node has); every node reaches these
  // with every protocol, so barrier hooks may use collectives (a PARMACS BARRIER counting
  // fewer processes than nodes is then a program error). Locks: tsm::lock_array and PARMACS
  // LOCK/UNLOCK, on the acquiring or releasing node only.
  virtual void before_barrier() {}
  virtual void after_barrier() {}
  virtual void after_acquire() {}
  virtual void before_release() {}
};

// Bytes [first_byte, first_byte + bytes) of a segment run by `p` (whole blocks).
struct range_binding {
  std::size_t first_byte = 0;
  std::size_t bytes = 0;
  protocol* p = nullptr;
};

// Collective: a segment of `bytes` (rounded up to blocks) whose ranges run the protocols
// given, and every other block stache. Protocol objects belong to the caller and must
// outlive the segment (tsm::free ends it). usage_error for ranges that overlap, do not
// start and end on block boundaries, lie outside the segment, or whose protocol refuses
// the block size.
void* alloc_bound(std::size_t bytes, std::span<const range_binding> ranges, const options& opt = {});

// Collective: rebinds a range of a live segment to `p` (stache's ranges, before any node
// touched them). usage_error once any block of the range has faulted, or for bad bounds;
// the nodes agree first, so a bind refused on one node (or given a different range or
// protocol name on another) is refused on every node, and no node binds the range.
void bind(void* start, std::size_t bytes, protocol& p);

// The protocol running the block at `address` on this node (usage_error outside TSM memory).
protocol& protocol_at(const void* address);

namespace detail {
// alloc_bound, bind and free for a layer above (libxsm's entry points). Their one check that
// the runtime runs names the caller's call `api` ("xsm::free called after squall::finalize"),
// and so do alloc_bound's other errors.
void* alloc_bound(std::size_t bytes, std::span<const range_binding> ranges, const options& opt, const char* api);
void bind(void* start, std::size_t bytes, protocol& p, const char* api);
void free(void* p, const char* api);
}  // namespace detail

// Protocols by name, for memory whose options name its protocol (options::protocol: any
// tsm::alloc or tsm::share, the shared heap of tsm::init, and every segment of a PARMACS
// program under SQUALL_TSM_PROTOCOL). A maker returns a new object that will run one whole
// segment; libtsm owns it and destroys it when the segment is freed. "stache" is built in.
// A library registers its makers from a static initialiser (libxsm registers
// "multiple-writer"): the registry is made on first use, so the order in which libraries
// start does not matter.
//
// A program need not link libxsm to name its protocols: a name that is not registered when a
// segment asks for it makes libtsm load libsquall-xsm once, from the directory libsquall-tsm
// was loaded from (else by the loader's search), whose initialisers then register its makers.
// A program linked against libxsm but calling nothing in it (dropped by --as-needed) is
// served the same way.
using protocol_maker = std::unique_ptr<protocol> (*)();
// usage_error if `name` is "stache", empty, or registered already.
void register_protocol_maker(std::string_view name, protocol_maker make);
// A new object for `name`, loading libsquall-xsm first if needed; usage_error for "stache"
// (libtsm's own, made per segment) or a name nobody registered, listing the known ones.
std::unique_ptr<protocol> make_protocol(std::string_view name);
// "stache" then the registered names, sorted.
std::vector<std::string> protocol_names();

// A count a protocol keeps: this object's own value, and a total over every object of this
// node under `total_name` in the statistics table ("tsm.read_misses", "xsm.pushes", ...).
// Atomic, so that any thread may read it (tsm::counts_of from the program thread while the
// fault thread counts a miss) and a sync hook on the program thread may count beside a
// handler: each add is one more locked instruction, next to a fault's or message's cost.
class protocol_counter {
 public:
  explicit protocol_counter(std::string_view total_name) : total_(total_name) {}
  void add(std::uint64_t n = 1) {
    value_.fetch_add(n, std::memory_order_relaxed);
    total_.add(n);
  }
  std::uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
  stats::counter total_;
};

}  // namespace squall::tsm
