// SPDX-License-Identifier: BSD-3-Clause
// Stache's one-sided reads (PROTOCOL.md, "One-sided reads"): the home word each block has in
// its home's memory, the home closing and opening it, a reader registering there and copying
// the block from the home's memory, and the home reopening at its barrier the blocks it wrote
// after readers of its host had copies.
#include "stache.hpp"

#include <squall/am.hpp>
#include <squall/runtime.hpp>

#include <squall/settings.hpp>

namespace squall::tsm::detail {
namespace {

// The home word's bit that says a block is open to one-sided reads; bit n is node n's as a
// reader registered there (PROTOCOL.md, "One-sided reads"). Zero, the word's value at
// allocation, is closed with no reader: fresh blocks go by request (and E grants).
constexpr std::uint64_t open_bit = std::uint64_t{1} << 63;

}  // namespace

bool stache::wants_home_words() {
  static const bool on = settings::on("SQUALL_TSM_ONE_SIDED", true) && squall::nodes() < 64;
  return on;
}

// One-sided reads (PROTOCOL.md). The home closes the word at the start of every transaction:
// from then on a reader finds it closed and asks by message, and every reader that registered
// while it was open is a sharer like one granted by message (so a write will invalidate it).
void stache::close(segment s, block_index b, bool write) {
  if (!one_sided_) return;
  std::atomic<std::uint64_t>* word = s.home_word(b);
  if (word == nullptr) return;
  const std::uint64_t was = word->fetch_and(~open_bit, std::memory_order_acq_rel);
  if ((was & open_bit) == 0) return;  // bits left by readers that found it closed: not sharers
  // A reopened block pays off once a reader copies it; a write before that ends it unpaid.
  reopen_mark& mark = reopen_marks_[b - first_];
  if (mark == reopened && (was & ~open_bit) != 0) mark = not_listed;
  if (mark == reopened && write) mark = not_worth_it;
  for (std::uint64_t readers = was & ~open_bit; readers != 0; readers &= readers - 1) {
    dir_.set_sharer(b, __builtin_ctzll(readers), true);
  }
}

// A block no node holds writable, with no transaction running, is clean: the home's protocol
// view is its current copy. Opening stores the bit alone, dropping the bits readers left while
// it was closed (those withdrew, or were taken in when it closed).
void stache::open_if_clean(segment s, block_index b) {
  if (!one_sided_ || dir_.owner(b) >= 0 || dir_.busy(b)) return;
  if (std::atomic<std::uint64_t>* word = s.home_word(b)) word->store(open_bit, std::memory_order_release);
}

// A read miss on a block whose home is another node of this host: register in its home word;
// if the word was open, copy the home's bytes, which stay current until the home closes the
// word, and the home then invalidates this copy like any sharer's (its invalidation waits for
// the node lock, which this fault handler holds, so it never overtakes the copy). If closed,
// withdraw and ask by message.
bool stache::read_one_sided(segment s, block_index b) {
  if (!one_sided_ || fetching_[b - first_] != 0 || s.home(b) == squall::node()) return false;
  std::atomic<std::uint64_t>* word = s.home_word(b);
  if (word == nullptr) return false;
  const std::uint64_t mine = std::uint64_t{1} << squall::node();
  if ((word->fetch_or(mine, std::memory_order_acq_rel) & open_bit) == 0) {
    word->fetch_and(~mine, std::memory_order_relaxed);
    return false;
  }
  s.copy_from_home(b);
  s.set_tag(b, tag::read_only);
  one_sided_reads_.add();
  return true;
}

// Reopening at barriers. A block its home writes while readers of its host had copies (a
// producer's data: Jacobi's boundary rows, a home's results that others read after a barrier)
// would stay closed after the write, and each reader's next miss would wait for the home's
// processor to lower its copy. So the home notes such a block at its write grant, and before
// it enters its next barrier lowers its own copy to ReadOnly and opens the word: the readers
// after the barrier copy the block from its memory. Its own next write is then an upgrade
// (a local fault, and the invalidations a write needs anyway). A reopened block that closes
// again for a write before any reader copied it (the home wrote first, or its readers are on
// other hosts) cost the home that fault for nothing: it is not reopened again.
void stache::note_written_after_readers(segment s, block_index b) {
  const int me = squall::node();
  if (!one_sided_ || reopen_marks_[b - first_] != not_listed || to_reopen_.size() == to_reopen_.capacity()) return;
  // Readers: sharers. A writer it took the block from (false sharing, a migratory block) is
  // likelier to write it again than to read it.
  bool near_reader = false;
  dir_.for_each_sharer(b, [&](int n) { near_reader = near_reader || (n != me && s.shares_home_words_with(n)); });
  if (!near_reader) return;
  reopen_marks_[b - first_] = listed;
  to_reopen_.push_back(b);
  reopens_waiting_.store(true, std::memory_order_relaxed);
}

void stache::before_barrier() {
  if (reopens_waiting_.load(std::memory_order_relaxed)) am::run_locked(reopen_locked, this);
}

void stache::reopen_locked(void* self) {
  auto& p = *static_cast<stache*>(self);
  const int me = squall::node();
  const segment s = p.segment_;
  for (const block_index b : p.to_reopen_) {
    reopen_mark& mark = p.reopen_marks_[b - p.first_];
    if (mark != listed) continue;  // another node wrote it since it was listed
    mark = not_listed;
    // Still this home's alone, written, and not in a transaction or held for an access.
    if (p.dir_.owner(b) != me || p.dir_.busy(b) || s.tag_of(b) != tag::read_write || p.holding(s, b)) continue;
    mark = reopened;
    s.set_tag(b, tag::read_only);
    p.exclusive_[b - p.first_] = 0;
    p.dir_.set_owner(b, -1);
    p.dir_.set_sharer(b, me, true);
    p.open_if_clean(s, b);
    p.reopened_.add();
  }
  p.to_reopen_.clear();
  p.reopens_waiting_.store(false, std::memory_order_relaxed);
}

}  // namespace squall::tsm::detail
