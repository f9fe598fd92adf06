// SPDX-License-Identifier: BSD-3-Clause
// bulk-reduction: the pipelined shared-memory reduction of the paper's moldyn and unstructured
// (TSM-reduction), carried over virtual channels (squall/channel.hpp) instead of stache's
// misses and barriers.
//
//   squall::xsm::bulk_reduction red;
//   double* total = squall::xsm::alloc<double>(n, red);        // collective: the result array
//   std::vector<double> mine(n, 0.0);                           // this node's contributions
//   ... mine[i] += ... ;
//   red.reduce(std::span<const double>(mine), squall::op::sum{});   // collective
//   ... read total[i], on any node, until the next reduce ...
//
// Every node has a contribution for every element. The array bound to the protocol (its range,
// element i at byte i * sizeof(T) of the range) is cut into N pieces, piece q being the blocks
// homed at node q (the memory's home policy). The pieces rotate round the ring of nodes in N - 1
// steps, one channel message per node per step to its right neighbour (me + 1): each node adds
// its contribution to the piece it holds and passes it on, so piece q ends at node q holding the
// total, which lands in node q's blocks. Combination order (deterministic, the same on every
// run): element i of piece q is op(...op(op(c[q+1], c[q+2]), c[q+3])..., c[q]), node numbers mod
// N, c[p] being node p's contribution (on one node: c[0]). Any other node reads the result by
// fetching a read-only copy of the block from its home (PROTOCOLS.md).
//
// Errors (usage_error, on every node alike before anything is sent): a contribution longer
// than the range, an element size that does not divide the block size. Nodes passing
// contributions of different lengths: usage_error on a node that receives a piece of the wrong
// length. A store to the result array by the program ends the job with a message.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>

#include <squall/collectives.hpp>
#include <squall/xsm/protocol.hpp>

namespace squall::xsm {

namespace detail {
struct bulk_reduction_state;
}

class bulk_reduction final : public protocol {
 public:
  bulk_reduction();
  ~bulk_reduction() override;
  bulk_reduction(const bulk_reduction&) = delete;
  bulk_reduction& operator=(const bulk_reduction&) = delete;

  // Collective: the totals of every node's `local` land in the bound array's first
  // local.size() elements, each in its home's blocks. `op` combines two elements
  // (squall::op::sum, min, max, or any T(T, T) callable).
  template <class T, class Op>
  void reduce(std::span<const T> local, Op op) {
    static_assert(std::is_trivially_copyable_v<T>, "squall::xsm::bulk_reduction: T must be trivially copyable");
    run(std::as_bytes(local), sizeof(T), &op, [](const void* o, std::byte* acc, const std::byte* in, std::size_t count) {
      const Op& f = *static_cast<const Op*>(o);
      for (std::size_t i = 0; i < count; ++i) {
        T a, b;
        std::memcpy(&a, acc + i * sizeof(T), sizeof(T));
        std::memcpy(&b, in + i * sizeof(T), sizeof(T));
        a = f(a, b);
        std::memcpy(acc + i * sizeof(T), &a, sizeof(T));
      }
    });
  }

  std::string_view name() const override { return "bulk_reduction"; }
  void attach(block_index first, block_index end, std::size_t block_size) override;
  void detach() override;
  void started(segment s) override;
  void read_fault(segment s, block_index b) override;
  void write_fault(segment s, block_index b) override;

  // Routed messages (a reader's request to a home, the home's copy back).
  void on_fetch(segment s, block_index b, int from, std::uint64_t reader_completed);
  void on_copy(segment s, block_index b, int from, block_part bytes);

  protocol_counter reductions{"xsm.bulk_reduction.reductions"};  // reduce calls
  protocol_counter messages{"xsm.bulk_reduction.messages"};      // channel messages sent (N - 1 a reduce)
  protocol_counter bytes{"xsm.bulk_reduction.bytes"};            // their bytes
  protocol_counter fetches{"xsm.bulk_reduction.fetches"};        // copies this node fetched (read misses)
  protocol_counter copies_sent{"xsm.bulk_reduction.copies_sent"};  // copies this home sent

 private:
  using combine_fn = void (*)(const void* op, std::byte* acc, const std::byte* in, std::size_t count);
  void run(std::span<const std::byte> local, std::size_t element_size, const void* op, combine_fn combine);
  std::unique_ptr<detail::bulk_reduction_state> state_;
};

}  // namespace squall::xsm
