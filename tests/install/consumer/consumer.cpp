// SPDX-License-Identifier: BSD-3-Clause
#include <cstdio>
#include <squall/squall.hpp>

int on_double(squall::am::token&, int x) { return 2 * x; }

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  const int r = squall::am::call<on_double>(squall::node(), 21);
  std::printf("consumer: node %d of %d got %d from Squall %s\n", squall::node(), squall::nodes(), r,
              SQUALL_VERSION_STRING);
  return r == 42 ? 0 : 1;
}
