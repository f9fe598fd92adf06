// SPDX-License-Identifier: BSD-3-Clause
#include "home_writes.hpp"

#include <cstdio>
#include <cstdlib>

#include <squall/runtime.hpp>

namespace squall::xsm::detail {

void home_writes::attach(const char* protocol, block_index first, block_index end) {
  protocol_ = protocol;
  first_ = first;
  end_ = end;
  flags_.assign(end - first, 0);
  list_.assign(end - first, 0);
  listed_ = 0;
}

std::span<const block_index> home_writes::close(segment s) {
  listed_ = s.take_written(first_, end_, list_);
  const int me = squall::node();
  for (std::size_t i = 0; i < listed_; ++i) {
    if (s.home(list_[i]) != me) foreign_write(protocol_, s, list_[i]);
    flags_[list_[i] - first_] = 1;
  }
  return std::span<const block_index>(list_.data(), listed_);
}

void home_writes::reopen() {
  for (std::size_t i = 0; i < listed_; ++i) flags_[list_[i] - first_] = 0;
  listed_ = 0;
}

void foreign_write(const char* protocol, segment s, block_index b) {
  std::fprintf(stderr, "squall xsm: %s: node %d wrote block %zu (at %p), homed on node %d; only a block's home writes it under %s\n",
               protocol, squall::node(), b, static_cast<void*>(s.address_of(b)), s.home(b), protocol);
  std::abort();
}

}  // namespace squall::xsm::detail
