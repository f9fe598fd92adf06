// SPDX-License-Identifier: BSD-3-Clause
// A user's TSM program built against an installed Squall: node 0 writes shared memory that
// every node then reads.
#include <cstdio>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  auto* x = squall::tsm::alloc<int>(1024);
  if (squall::node() == 0) x[1000] = 7;
  squall::tsm::barrier();
  std::printf("consumer_tsm: node %d of %d read %d\n", squall::node(), squall::nodes(), x[1000]);
  squall::tsm::barrier();
  squall::tsm::free(x);
}
