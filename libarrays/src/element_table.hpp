// SPDX-License-Identifier: BSD-3-Clause
// A node's table of the indices it knows, one record each, looked up twice for every element
// message (where to send it; what to do with it when it arrives).
//
// Written here rather than taken from a library for three properties at once:
// - a record never moves while it exists, so a reference taken before an entry method runs
//   (which may add records) stays good (std::unordered_map has this too);
// - iteration order depends only on the sequence of additions and removals, never on
//   addresses or a per-run seed, so broadcasts reach a node's elements in the same order in
//   every run and floating-point reductions come out bit-identical (absl's SwissTables seed
//   their order with the table's address);
// - a lookup takes the key's hash and bytes as they are in a message, so a hit builds no key.
// The index is open addressing with linear probing over a power-of-two array of (hash,
// record) pairs, at most half full, with backward-shift deletion (no tombstones): a hit costs
// a mask, a compare of the stored hash and one compare of the key's bytes, against the
// prime modulo and the node chase of std::unordered_map's.
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include <squall/arrays/key.hpp>

namespace squall::arrays::detail {

template <class Record>  // has a `key k` member
class element_table {
 public:
  Record* find(std::uint64_t hash, std::string_view bytes) const {
    if (index_.empty()) return nullptr;
    for (std::size_t i = hash & mask(); index_[i].record != 0; i = (i + 1) & mask()) {
      if (index_[i].hash != hash) continue;
      Record* r = records_[index_[i].record - 1].get();
      if (same_bytes(r->k.bytes(), bytes)) return r;
    }
    return nullptr;
  }
  Record* find(const key& k) const { return find(k.hash(), k.bytes()); }

  // One record the caller asked to keep at hand (keep_at_hand), found by its bytes alone,
  // before any hash is computed: null when `bytes` are another key's. Forgotten when erased.
  Record* at_hand(std::string_view bytes) const {
    return at_hand_ != nullptr && same_bytes(at_hand_->k.bytes(), bytes) ? at_hand_ : nullptr;
  }
  void keep_at_hand(Record& r) { at_hand_ = &r; }

  // The record of `k`, made (its other members default) when there is none; second: made.
  // `make_key` builds the key, only when a record is made.
  template <class MakeKey>
  std::pair<Record*, bool> find_or_add(std::uint64_t hash, std::string_view bytes, MakeKey&& make_key) {
    if (Record* r = find(hash, bytes)) return {r, false};
    if (2 * (count_ + 1) > index_.size()) grow();
    std::uint32_t number = 0;
    if (free_.empty()) {
      records_.emplace_back();
      number = static_cast<std::uint32_t>(records_.size());
    } else {
      number = free_.back();
      free_.pop_back();
    }
    auto& owned = records_[number - 1];
    owned = std::make_unique<Record>();
    owned->k = make_key();
    place(hash, number);
    ++count_;
    return {owned.get(), true};
  }

  // Forgets the record (references to it dangle from here on).
  void erase(Record& r) {
    std::size_t i = r.k.hash() & mask();
    while (records_[index_[i].record - 1].get() != &r) i = (i + 1) & mask();
    const std::uint32_t number = index_[i].record;
    if (at_hand_ == &r) at_hand_ = nullptr;
    // Backward shift: pull each later entry of the run back into the hole when its own
    // preferred position does not lie in the hole's cyclic range (hole, entry].
    for (std::size_t next = (i + 1) & mask(); index_[next].record != 0; next = (next + 1) & mask()) {
      const std::size_t want = index_[next].hash & mask();
      const bool stays = ((next - want) & mask()) < ((next - i) & mask());
      if (stays) continue;
      index_[i] = index_[next];
      i = next;
    }
    index_[i] = {};
    records_[number - 1].reset();
    free_.push_back(number);
    --count_;
  }

  std::size_t size() const { return count_; }

  // Every record there was at the call, in record order. `f` may add records (an entry
  // method that sends does), which it does not visit, but not erase them.
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t i = 0, n = records_.size(); i < n; ++i)
      if (records_[i]) f(*records_[i]);
  }
  // Erases the records `pred` holds for; returns how many.
  template <class Pred>
  std::size_t erase_if(Pred&& pred) {
    std::size_t erased = 0;
    for (auto& r : records_) {
      if (r && pred(*r)) {
        erase(*r);
        ++erased;
      }
    }
    return erased;
  }

 private:
  // Equal bytes, without a call for the short keys most indices have (an index<N> is 4N bytes).
  static bool same_bytes(std::string_view a, std::string_view b) {
    const std::size_t n = a.size();
    if (n != b.size()) return false;
    if (n >= 4 && n <= 16) {
      // Two overlapping words cover the whole: the first and the last 4 (or 8) bytes.
      if (n <= 8) return load<std::uint32_t>(a, 0) == load<std::uint32_t>(b, 0) && load<std::uint32_t>(a, n - 4) == load<std::uint32_t>(b, n - 4);
      return load<std::uint64_t>(a, 0) == load<std::uint64_t>(b, 0) && load<std::uint64_t>(a, n - 8) == load<std::uint64_t>(b, n - 8);
    }
    return a == b;
  }
  template <class W>
  static W load(std::string_view s, std::size_t at) {
    W w;
    std::memcpy(&w, s.data() + at, sizeof w);
    return w;
  }

  struct index_entry {
    std::uint64_t hash = 0;
    std::uint32_t record = 0;  // records_ position + 1; 0: empty
  };

  std::size_t mask() const { return index_.size() - 1; }
  void place(std::uint64_t hash, std::uint32_t number) {
    std::size_t i = hash & mask();
    while (index_[i].record != 0) i = (i + 1) & mask();
    index_[i] = {hash, number};
  }
  void grow() {
    std::vector<index_entry> old = std::exchange(index_, std::vector<index_entry>(index_.empty() ? 16 : 2 * index_.size()));
    for (const index_entry& e : old)
      if (e.record != 0) place(e.hash, e.record);
  }

  std::vector<std::unique_ptr<Record>> records_;  // null where erased
  std::vector<std::uint32_t> free_;               // erased positions + 1, reused first
  std::vector<index_entry> index_;
  std::size_t count_ = 0;
  Record* at_hand_ = nullptr;
};

}  // namespace squall::arrays::detail
