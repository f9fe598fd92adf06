// SPDX-License-Identifier: BSD-3-Clause
#include "sync_points.hpp"

#include <algorithm>
#include <vector>

#include "../stache.hpp"

namespace squall::tsm::detail {
namespace {

// Touched by the program thread only: segments are made and freed by collective calls.
std::vector<tsm::protocol*>& live() {
  static std::vector<tsm::protocol*> protocols;
  return protocols;
}

template <class Hook>
void tell_every_protocol(Hook hook) {
  // By index: a hook may not add or remove protocols, but a copy would cost an allocation
  // at every barrier.
  for (std::size_t i = 0; i < live().size(); ++i) hook(*live()[i]);
}

}  // namespace

void add_live_protocol(tsm::protocol& p) { live().push_back(&p); }
void remove_live_protocol(tsm::protocol& p) { std::erase(live(), &p); }

void before_barrier() {
  stache::let_go();
  tell_every_protocol([](tsm::protocol& p) { p.before_barrier(); });
}
void after_barrier() {
  tell_every_protocol([](tsm::protocol& p) { p.after_barrier(); });
}
void after_acquire() {
  tell_every_protocol([](tsm::protocol& p) { p.after_acquire(); });
}
void before_release() {
  stache::let_go();
  tell_every_protocol([](tsm::protocol& p) { p.before_release(); });
}

}  // namespace squall::tsm::detail
