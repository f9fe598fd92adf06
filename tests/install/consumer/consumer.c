// SPDX-License-Identifier: BSD-3-Clause
#include <stdio.h>
#include <squall/squall.h>
#include <squall/version.h>

int main(int argc, char** argv) {
  if (squall_init(&argc, &argv) != 0) return 1;
  printf("consumer_c: node %d of %d, Squall %s\n", squall_node(), squall_nodes(), SQUALL_VERSION_STRING);
  return squall_finalize();
}
