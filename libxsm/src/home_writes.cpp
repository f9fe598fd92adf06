// SPDX-License-Identifier: BSD-3-Clause
#include "home_writes.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <squall/runtime.hpp>

namespace squall::xsm::detail {

void home_writes::attach(block_index first, block_index end) {
  first_ = first;
  flags_.assign(end - first, 0);
  list_.clear();
  list_.reserve(end - first);
}

void home_writes::write(segment s, block_index b) {
  if (flags_[b - first_] == 0) {
    flags_[b - first_] = 1;
    list_.push_back(b);  // never beyond the capacity reserved: one entry per block
  }
  s.set_tag(b, tag::read_write);
}

std::span<const block_index> home_writes::close(segment s) {
  std::sort(list_.begin(), list_.end());
  for (const block_index b : list_) s.set_tag(b, tag::read_only);
  return list_;
}

void home_writes::reopen() {
  for (const block_index b : list_) flags_[b - first_] = 0;
  list_.clear();
}

void foreign_write(const char* protocol, segment s, block_index b) {
  std::fprintf(stderr, "squall xsm: %s: node %d wrote block %zu (at %p), homed on node %d; only a block's home writes it under %s\n",
               protocol, squall::node(), b, static_cast<void*>(s.address_of(b)), s.home(b), protocol);
  std::abort();
}

}  // namespace squall::xsm::detail
