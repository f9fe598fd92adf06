// SPDX-License-Identifier: BSD-3-Clause
// A libarrays program built against the installed Squall: elements on every node, a
// broadcast and a sum reduction whose result every node prints.
#include <squall/arrays.hpp>
#include <squall/runtime.hpp>

#include <cstdio>

namespace arrays = squall::arrays;

namespace consumer {

int total = -1;
void got(const int& t) { total = t; }

struct Cell : arrays::element<arrays::index1d> {
  int value = 0;
  void add(int x) {
    value += x;
    contribute(value, arrays::sum<int>(), arrays::on_every_node<&got>());
  }
  template <class A>
  void serialize(A& ar) {
    ar(value);
  }
};

}  // namespace consumer

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  auto cells = arrays::array<consumer::Cell>::create();
  if (squall::node() == 0)
    for (int i = 0; i < 10; ++i) cells.insert(i);
  arrays::quiesce();
  if (squall::node() == 0) cells.broadcast<&consumer::Cell::add>(3);
  arrays::run_until([] { return consumer::total >= 0; });
  arrays::quiesce();
  std::printf("consumer_arrays: node %d: total %d\n", squall::node(), consumer::total);
  return 0;
}
