// SPDX-License-Identifier: BSD-3-Clause
// Which protocol runs each block of a TSM segment: the memory layer's fault handler for the
// segment, passing each fault on to the protocol bound to the faulting block's range.
#pragma once
#include <utility>
#include <vector>

#include <squall/tsm/protocol.hpp>

namespace squall::tsm::detail {

class binding final : public memory::protocol {
 public:
  // Every block of a segment of `blocks` blocks run by `whole`.
  binding(block_index blocks, tsm::protocol& whole);

  // Hands [first, end) to `p`; usage_error (starting with `api`) if a block of it has
  // faulted already or the range is empty or outside the segment.
  void rebind(block_index first, block_index end, tsm::protocol& p, const char* api);
  // Throws the usage_error rebind(first, end, ...) would, changing nothing.
  void check_rebind(block_index first, block_index end, const char* api) const;

  void read_fault(segment s, block_index b) override;
  void write_fault(segment s, block_index b) override;

  tsm::protocol& protocol_for(block_index b) const { return *at(b).p; }
  // The blocks of the range holding b, all run by protocol_for(b).
  std::pair<block_index, block_index> range_of(block_index b) const { return {at(b).first, at(b).end}; }
  // Counts as a use of the block's range, as a fault does: it can no longer be rebound.
  void mark_used(block_index b) { at(b).used = true; }
  // Each protocol with the blocks it runs, once per range, in block order.
  struct range {
    block_index first, end;
    tsm::protocol* p;
    bool used;  // a block of it has faulted
  };
  const std::vector<range>& ranges() const { return ranges_; }

 private:
  range& at(block_index b);
  const range& at(block_index b) const;

  std::vector<range> ranges_;  // sorted, covering every block
};

// The binding of a TSM segment; usage_error (naming `api`) for a segment of another kind.
binding& binding_of(segment s, const char* api);

}  // namespace squall::tsm::detail
