// SPDX-License-Identifier: BSD-3-Clause
// A pointer kept into an in-place element after it migrated away: on the old node its slot
// is Invalid, so the access faults and the program ends with a message naming the mistake
// (arrays_stale_pointer_test passes when that message appears), never reading stale data.
#include <squall/arrays.hpp>
#include <squall/runtime.hpp>

#include <cstdio>

namespace arrays = squall::arrays;

namespace stale {

struct Cell : arrays::element<arrays::index1d> {
  int value = 7;
  void go(int to) { migrate_me(to); }
  template <class A>
  void serialize(A& ar) {
    ar(value);
  }
};

}  // namespace stale

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  auto a = arrays::array<stale::Cell>::create_in_place();
  if (squall::node() == 0) a.insert(0, 0);
  arrays::quiesce();
  const stale::Cell* kept = squall::node() == 0 ? a[0].local() : nullptr;
  if (squall::node() == 0) a[0].call<&stale::Cell::go>(1);
  arrays::quiesce();
  if (kept != nullptr) std::printf("read %d through a stale pointer\n", *static_cast<const volatile int*>(&kept->value));
  arrays::quiesce();
  return 0;
}
