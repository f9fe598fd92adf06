#include <cstdio>
#include <squall/squall.hpp>

static int pongs = 0;
void on_pong(squall::am::token&, int v) { pongs += v; }
void on_ping(squall::am::token& t, int v) { t.reply<on_pong>(v + 1); }
int on_add(squall::am::token&, int a, int b) { return a + b; }

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  const int me = squall::node(), n = squall::nodes();
  squall::am::send<on_ping>((me + 1) % n, 1);
  squall::am::wait_until([] { return pongs == 2; });
  int r = squall::am::call<on_add>((me + 1) % n, 3, 4);
  long s = squall::allreduce(long(me));
  squall::fence();
  std::printf("node %d/%d: pongs %d add %d sum %ld\n", me, n, pongs, r, s);
}
