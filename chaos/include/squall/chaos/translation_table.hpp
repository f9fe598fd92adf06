// SPDX-License-Identifier: BSD-3-Clause
// Translation tables: global index -> (owner, local offset) for an irregular distribution.
#pragma once
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include <squall/chaos/types.hpp>

namespace squall::chaos {

enum class table_mode {
  replicated,   // every node holds every entry: lookups are local
  distributed,  // entries are paged over the nodes by blocks of indices; lookups are batched,
                // one request message per node holding pages asked for
};

class translation_table {
 public:
  // Collective. `owned` lists the global indices this node owns, in local order (its local
  // offset i holds owned[i]). Across the nodes the lists must partition [0, global_size):
  // a missing, repeated or out-of-range index is a usage_error on every node. Every node gives
  // the same global_size, mode and page_size (page_size sizes a distributed table's pages): one
  // that differs is a usage_error on every node, naming it and its values.
  translation_table(std::span<const index> owned, index global_size, table_mode mode = table_mode::replicated,
                    index page_size = 1024);

  // Collective. The block distribution: node p owns a contiguous run, the first
  // global_size % nodes() nodes one element more.
  static translation_table block(index global_size, table_mode mode = table_mode::replicated);

  // Destroying a distributed table while another node may still look up in it ends the job
  // with a message: let every node finish its lookups first (a barrier will do). A table
  // moved from is a usage_error wherever it is used (on that node), until one is assigned to it.
  translation_table(translation_table&&) noexcept;
  translation_table& operator=(translation_table&&) noexcept;
  ~translation_table();

  index global_size() const;
  index local_size() const;  // elements this node owns
  table_mode mode() const;
  std::span<const index> owned() const;  // this node's global indices, in local order

  // Where each of `globals` lives. Not collective: in distributed mode the owner of each page
  // asked for answers from its message handler, one request per node per call (split into
  // several if a request would exceed the message size limit). An index outside
  // [0, global_size) is a usage_error.
  void lookup(std::span<const index> globals, std::span<location> out) const;
  std::vector<location> lookup(std::span<const index> globals) const;

  // Bytes of table this node holds (the replicated table grows with global_size, the
  // distributed one with global_size / nodes()).
  std::size_t memory_bytes() const;

  struct state;

 private:
  explicit translation_table(std::unique_ptr<state> s);
  const state& checked() const;  // s_, or usage_error if it was moved from
  std::unique_ptr<state> s_;
};

}  // namespace squall::chaos
