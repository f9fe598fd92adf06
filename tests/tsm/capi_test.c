// SPDX-License-Identifier: BSD-3-Clause
/* TSM from C: the shared heap, locks, barriers, fetching ahead and reductions. Node 0 allocates a table and publishes
 * its address in memory every node can find (the first heap allocation, which every node
 * computes the same way); every node adds to it under locks; node 0 checks the sums.
 * Exits non-zero on any wrong answer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <squall/squall.h>
#include <squall/tsm.h>

#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "tsm capi_test: %s failed (%s)\n", #cond, tsm_last_error()); return 1; } } while (0)

enum { slots = 64, rounds = 20 };

int main(int argc, char** argv) {
  int me, n, r;
  size_t i;
  uint64_t** directory;  /* in the heap: where node 0 put the table */
  uint64_t* table;
  tsm_locks* locks;
  CHECK(tsm_init() == -1); /* before squall_init: an error, not a crash */
  /* Each call names itself, not the runtime call it would reach first. */
  CHECK(strstr(tsm_last_error(), "tsm_init called before squall::init") != NULL);
  CHECK(tsm_barrier() == -1);
  CHECK(strstr(tsm_last_error(), "tsm_barrier called before squall::init") != NULL);
  CHECK(tsm_locks_create(4) == NULL);
  CHECK(strstr(tsm_last_error(), "tsm_locks_create called before squall::init") != NULL);
  CHECK(squall_init(&argc, &argv) == 0);
  CHECK(tsm_init() == 0);
  me = tsm_node();
  n = tsm_nodes();
  if (getenv("SQUALL_TEST_NODES") != NULL) CHECK(n == atoi(getenv("SQUALL_TEST_NODES")));
  /* Every node allocates one word, in node order: node 0's comes first in the heap. */
  for (r = 0; r < n; ++r) {
    if (r == me) {
      directory = (uint64_t**)tsm_malloc(sizeof *directory);
      CHECK(directory != NULL);
    }
    CHECK(tsm_barrier() == 0);
  }
  if (me == 0) {
    table = (uint64_t*)tsm_malloc(slots * sizeof *table);
    CHECK(table != NULL);
    *directory = table;
  }
  CHECK(squall_broadcast(&directory, sizeof directory, 0) == 0);
  CHECK(tsm_barrier() == 0);
  table = *directory;
  locks = tsm_locks_create(slots);
  CHECK(locks != NULL);
  for (r = 0; r < rounds; ++r) {
    for (i = (size_t)me; i < slots; i += 3) {
      CHECK(tsm_lock_acquire(locks, i) == 0);
      table[i] += (uint64_t)me + 1;
      CHECK(tsm_lock_release(locks, i) == 0);
    }
  }
  CHECK(tsm_lock_release(locks, 0) == -1);
  CHECK(strstr(tsm_last_error(), "does not hold lock 0") != NULL);
  CHECK(tsm_barrier() == 0);
  CHECK(tsm_fetch(table, slots * sizeof *table) == 0); /* read copies ahead: a hint */
  CHECK(tsm_fetch(table, 0) == 0);
  CHECK(tsm_fetch(&me, sizeof me) == -1); /* not TSM memory */
  CHECK(tsm_barrier() == 0);
  if (me == 0) {
    for (i = 0; i < slots; ++i) {
      uint64_t want = 0;
      int w;
      for (w = 0; w < n; ++w) {
        if ((i >= (size_t)w) && (i - (size_t)w) % 3 == 0) want += (uint64_t)(w + 1) * rounds;
      }
      CHECK(table[i] == want);
    }
    CHECK(tsm_free(table) == 0);
    CHECK(tsm_free(table) == -1); /* twice */
  }
  CHECK(tsm_free(&me) == -1); /* not in the heap */
  CHECK(tsm_free(NULL) == 0);  /* as free(NULL) */
  CHECK(tsm_malloc((size_t)-1) == NULL); /* refused, not rounded to a small block */
  CHECK(strstr(tsm_last_error(), "no room for 18446744073709551615 bytes") != NULL);
  {
    double sum = me + 0.5;
    long lo = 10 - me, hi = me;
    CHECK(tsm_allreduce_double(&sum, TSM_SUM) == 0);
    CHECK(sum == n * (n - 1) / 2.0 + 0.5 * n);
    CHECK(tsm_allreduce_long(&lo, TSM_MIN) == 0 && lo == 10 - (n - 1));
    CHECK(tsm_allreduce_long(&hi, TSM_MAX) == 0 && hi == n - 1);
    CHECK(tsm_allreduce_long(&hi, 7) == -1);
  }
  CHECK(tsm_locks_destroy(locks) == 0);
  locks = tsm_locks_create((size_t)n); /* destroyed after squall_finalize, a lock held */
  CHECK(locks != NULL);
  CHECK(tsm_lock_acquire(locks, (size_t)me) == 0); /* one of its own: on 5 nodes lock me % 4 deadlocked */
  CHECK(squall_finalize() == 0);
  CHECK(tsm_locks_destroy(locks) == 0); /* this node's part goes; nothing is left to release */
  CHECK(tsm_malloc(10) == NULL);
  CHECK(strstr(tsm_last_error(), "tsm_malloc called after squall::finalize") != NULL);
  CHECK(tsm_barrier() == -1);
  CHECK(strstr(tsm_last_error(), "tsm_barrier called after squall::finalize") != NULL);
  return 0;
}
