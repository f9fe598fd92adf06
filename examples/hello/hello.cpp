// SPDX-License-Identifier: BSD-3-Clause
// Squall's first program: every node has its neighbour square a number, greets node 0, sends
// it a block of any size, and the nodes add up their ids. Run: squallrun -n 2 ./hello
#include <cstdio>
#include <string>
#include <vector>

#include <squall/squall.hpp>
namespace am = squall::am;

// Handlers are plain functions whose first parameter is am::token&.
int on_square(am::token&, int x) { return x * x; }  // a handler with a result

void on_greeting(am::token&, int from, am::payload text) {  // small arguments + a payload
  std::printf("node %d: \"%.*s\" from node %d\n", squall::node(), int(text.size()),
              reinterpret_cast<const char*>(text.data()), from);
}

std::size_t bulk_bytes = 0;  // on node 0: the bytes bulk_send brought
void on_block(am::token&, am::payload bytes) { bulk_bytes += bytes.size(); }

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);  // init ... finalize
  const int me = squall::node(), n = squall::nodes();

  const int next = (me + 1) % n;
  const int square = am::call<on_square>(next, me);  // request/reply
  std::printf("node %d: node %d says %d squared is %d\n", me, next, me, square);

  const std::string text = "hello from node " + std::to_string(me);
  am::send<on_greeting>(0, me, am::as_payload(text.data(), text.size()));  // copied at once

  const std::vector<double> block(1 << 16, 1.0);  // 512 KiB: bulk_send takes any size
  auto h = am::bulk_send<on_block>(0, am::as_payload(block.data(), block.size()));
  h.wait_remote();  // the handler on node 0 has run

  const long ids = squall::allreduce(long(me));  // also broadcast, reduce, barrier
  squall::fence();  // every message, and every message their handlers sent, was handled
  if (me == 0)
    std::printf("node 0: %d nodes, ids add up to %ld, %zu bytes in bulk\n", n, ids, bulk_bytes);
}
