#include <stdio.h>
#include <squall/squall.h>

int main(int argc, char** argv) {
  if (squall_init(&argc, &argv) != 0) return 1;
  printf("consumer_c: node %d of %d\n", squall_node(), squall_nodes());
  return squall_finalize();
}
