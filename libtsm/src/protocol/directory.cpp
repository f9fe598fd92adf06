// SPDX-License-Identifier: BSD-3-Clause
#include <squall/tsm/directory.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace squall::tsm {
namespace {

std::size_t words_for(int nodes) { return (static_cast<std::size_t>(nodes) + 63) / 64; }

}  // namespace

home_directory::home_directory(memory::block_index first, memory::block_index end, int nodes, std::size_t queue_capacity)
    : first_(first), words_(words_for(nodes)), entries_(end - first), sharers_((end - first) * words_) {
  queue_.reserve(queue_capacity != 0 ? queue_capacity : static_cast<std::size_t>(nodes));
}

std::size_t home_directory::bytes_per_block(int nodes) { return sizeof(entry_t) + words_for(nodes) * sizeof(std::uint64_t); }

bool home_directory::is_sharer(memory::block_index b, int node) const {
  return (words_of(b)[static_cast<std::size_t>(node) / 64] >> (node % 64) & 1) != 0;
}

void home_directory::set_sharer(memory::block_index b, int node, bool on) {
  std::uint64_t& w = words_of(b)[static_cast<std::size_t>(node) / 64];
  const std::uint64_t bit = std::uint64_t{1} << (node % 64);
  w = on ? (w | bit) : (w & ~bit);
}

void home_directory::clear_sharers(memory::block_index b) { std::fill_n(words_of(b), words_, 0); }

bool home_directory::held_by_nobody(memory::block_index b) const {
  const std::uint64_t* w = words_of(b);
  return entry(b).owner < 0 && std::all_of(w, w + words_, [](std::uint64_t bits) { return bits == 0; });
}

void home_directory::start(memory::block_index b, int node, bool write) {
  entry_t& e = entry(b);
  e.requester = node;
  e.write = write;
  e.answers = 0;
}

bool home_directory::answer(memory::block_index b) {
  entry_t& e = entry(b);
  if (e.answers == 0) {
    std::fprintf(stderr, "squall tsm: an answer for block %zu arrived at its home, which expected none\n", b);
    std::abort();
  }
  return --e.answers == 0;
}

void home_directory::defer(memory::block_index b, int node, bool write) {
  if (queue_.size() == queue_.capacity()) {
    // Growing would allocate, maybe on the SIGBUS path: more waiting requests than the
    // protocol said it could have is its bug.
    std::fprintf(stderr, "squall tsm: more requests wait at this home than the %zu its protocol allows (node %d sent two at once?)\n",
                 queue_.capacity(), node);
    std::abort();
  }
  queue_.push_back({b, node, write});
}

std::optional<home_directory::request> home_directory::next_waiting(memory::block_index b) {
  const auto it = std::find_if(queue_.begin(), queue_.end(), [b](const request& r) { return r.block == b; });
  if (it == queue_.end()) return std::nullopt;
  const request r = *it;
  queue_.erase(it);
  return r;
}

}  // namespace squall::tsm
