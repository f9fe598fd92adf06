// SPDX-License-Identifier: BSD-3-Clause
/* The C API from a C program: handlers, request and reply by message, collectives.
 * Run under squallrun or mpirun; exits non-zero on any wrong answer, or when SQUALL_TEST_NODES
 * is set and the job has another size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <squall/squall.h>

static uint32_t pong_id;
static int pongs; /* written by a handler: read it only inside squall_am_wait_until */
static int expected_pongs;

static int all_pongs_in(void* ctx) {
  (void)ctx;
  return pongs == expected_pongs;
}

static void on_pong(int source, const void* args, size_t len, const void* payload, size_t plen) {
  (void)source; (void)args; (void)len; (void)payload; (void)plen;
  ++pongs;
}

static void on_ping(int source, const void* args, size_t len, const void* payload, size_t plen) {
  int value;
  (void)payload; (void)plen;
  if (len != sizeof value) return;
  memcpy(&value, args, sizeof value);
  squall_am_send(source, pong_id, &value, sizeof value, NULL, 0);
}

#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "capi_test: %s failed (%s)\n", #cond, squall_last_error()); return 1; } } while (0)

int main(int argc, char** argv) {
  uint32_t ping_id = squall_am_register("capi.ping", on_ping);
  int me, n, d, i;
  double in[2], out[2];
  int64_t v, total;
  pong_id = squall_am_register("capi.pong", on_pong);
  /* The same name again: with the same function, the same id; with another, refused (it
   * ended the process). */
  CHECK(squall_am_register("capi.pong", on_pong) == pong_id);
  CHECK(squall_am_register("capi.pong", on_ping) == 0);
  CHECK(strstr(squall_last_error(), "'capi.pong' is registered already, with another function") != NULL);
  CHECK(squall_am_register("squall.mine", on_ping) == 0);
  CHECK(strstr(squall_last_error(), "is reserved for Squall's runtime") != NULL);
  CHECK(squall_node() == -1); /* before init: an error, not a crash */
  CHECK(squall_init(&argc, &argv) == 0);
  me = squall_node();
  n = squall_nodes();
  /* A launcher that quietly started single-node jobs must not pass. */
  if (getenv("SQUALL_TEST_NODES") != NULL) CHECK(n == atoi(getenv("SQUALL_TEST_NODES")));
  for (d = 0; d < n; ++d) CHECK(squall_am_send(d, ping_id, &d, sizeof d, NULL, 0) == 0);
  expected_pongs = n;
  CHECK(squall_am_poll() == 0);
  CHECK(squall_am_wait_until(all_pongs_in, NULL) == 0);
  CHECK(squall_am_send(n, ping_id, NULL, 0, NULL, 0) == -1);
  CHECK(strstr(squall_last_error(), "does not exist") != NULL);
  CHECK(squall_am_send(0, 12345, NULL, 0, NULL, 0) == -1);
  {
    /* Too large a payload: said in the C API's words (it named C++'s am::bulk_send). */
    const size_t most = squall_am_max_payload();
    char* big = calloc(most + 1, 1);
    CHECK(most > 0 && big != NULL);
    CHECK(squall_am_send(0, ping_id, NULL, 0, big, most + 1) == -1);
    free(big);
    CHECK(strstr(squall_last_error(), "exceeds squall_am_max_payload()") != NULL);
  }
  in[0] = me; in[1] = -me;
  CHECK(squall_allreduce_double(in, out, 2, SQUALL_MAX) == 0);
  CHECK(out[0] == n - 1 && out[1] == 0);
  v = me + 1;
  CHECK(squall_allreduce_int64(&v, &total, 1, SQUALL_SUM) == 0);
  CHECK(total == (int64_t)n * (n + 1) / 2);
  i = me == 0 ? 42 : 0;
  CHECK(squall_broadcast(&i, sizeof i, 0) == 0);
  CHECK(i == 42);
  /* NULL where bytes are to be read or written: -1 with a message, not a crash. */
  CHECK(squall_am_send(0, ping_id, NULL, 16, NULL, 0) == -1);
  CHECK(strstr(squall_last_error(), "args is null") != NULL);
  CHECK(squall_am_send(0, ping_id, NULL, 0, NULL, 8) == -1);
  CHECK(squall_allreduce_double(NULL, NULL, 4, SQUALL_SUM) == -1);
  CHECK(strstr(squall_last_error(), "is null") != NULL);
  CHECK(squall_broadcast(NULL, 8, 0) == -1);
  CHECK(squall_am_wait_until(NULL, NULL) == -1);
  CHECK(squall_stat(NULL) == 0);
  CHECK(squall_fence() == 0);
  CHECK(squall_stat("am.messages_sent") > 0);
  CHECK(squall_barrier() == 0);
  CHECK(squall_finalize() == 0);
  CHECK(squall_barrier() == -1);
  CHECK(strstr(squall_last_error(), "after squall::finalize") != NULL);
  return 0;
}
