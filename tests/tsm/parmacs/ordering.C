// SPDX-License-Identifier: BSD-3-Clause
/* PARMACS's synchronisation orders memory between processes with no BARRIER or LOCK
 * around it, as under threads: CREATE (main's writes reach the worker it starts, also a
 * worker that ran before), a worker's end and WAIT_FOR_END (its writes reach main), SETPAUSE
 * and WAITPAUSE, and GETSUB (a process handed -1 sees the writes of the one that took the
 * subscript before it). Run on 3 nodes, main and two workers, under every protocol:
 *   ordering            prints "ordering: ok" at the end
 * Each value is written by one process into a page homed at a node it does not run on, so
 * under a release-consistent protocol (SQUALL_TSM_PROTOCOL=multiple-writer) it reaches the
 * reader only through the synchronisation between them. */
#include <stdio.h>
#include <stdlib.h>
#include <squall/squall.h>

MAIN_ENV

#define WORDS 512 /* one page of longs */

struct GlobalMemory {
  PAUSEDEC(go)
  PAUSEDEC(back) /* holds the writer until the reader has checked: no later release helps */
  GSDEC(sub)
};

struct GlobalMemory *Global;
long *at0, *at1, *at2; /* a page homed at node 0, 1, 2 */
long round_no;

static void check(int ok, const char *what) {
  if (!ok) {
    printf("ordering: FAILED %s\n", what);
    fflush(stdout);
    exit(2);
  }
}

/* 0 and 1 for the workers on nodes 1 and 2: no LOCK, whose acquire would order memory. */
static long my_id(void) { return squall_node() - 1; }

/* Main wrote at1 (homed at a worker's node) for this round; each worker writes its word
 * of at0 (homed at main's node) and of at1 (main holds a copy; words 0 and 1, which the
 * workers do not check) for main to read after WAIT_FOR_END. */
void Reader(void) {
  long id = my_id(), i;
  for (i = 2; i < WORDS; i++) check(at1[i] == round_no * 1000 + i, "main's writes before create");
  at0[id] = round_no * 100 + id;
  at1[id] = -(round_no * 100 + id);
}

/* Worker 0 writes at0 and at2, then publishes a pause; worker 1 waits for it and reads. */
void Pauser(void) {
  long id = my_id(), i;
  if (id == 0) {
    for (i = 0; i < WORDS; i++) at2[i] = 7000 + i;
    at0[8] = 77;
    SETPAUSE(Global->go)
    WAITPAUSE(Global->back)
  } else {
    WAITPAUSE(Global->go)
    check(at2[WORDS - 1] == 7000 + WORDS - 1 && at0[8] == 77, "writes before setpause");
    SETPAUSE(Global->back)
  }
}

/* Each worker writes its word of at0 (homed at main's node), then takes a subscript: the
 * one handed -1 sees the other's word. */
void Subscriber(void) {
  long id = my_id(), s;
  at0[16 + id] = 500 + id;
  GETSUB(Global->sub, s, 0, 2)
  if (s < 0) {
    check(at0[16 + (1 - id)] == 500 + (1 - id), "writes before the other's getsub");
    SETPAUSE(Global->back)
  } else {
    WAITPAUSE(Global->back)
  }
}

static void run_workers(void (*f)(void)) {
  CREATE(f)
  CREATE(f)
  WAIT_FOR_END(2)
}

int main(int argc, char **argv) {
  long i;
  MAIN_INITENV(, 16000000)
  check(squall_nodes() == 3, "3 nodes (squallrun -n 3)");
  Global = (struct GlobalMemory *) G_MALLOC(sizeof(struct GlobalMemory), 0);
  PAUSEINIT(Global->go)
  PAUSEINIT(Global->back)
  GSINIT(Global->sub)
  at0 = (long *) G_MALLOC(WORDS * sizeof(long), 0);
  at1 = (long *) G_MALLOC(WORDS * sizeof(long), 1);
  at2 = (long *) G_MALLOC(WORDS * sizeof(long), 2);

  /* Two rounds: in the second, the workers hold copies of at1 from the first. */
  for (round_no = 1; round_no <= 2; round_no++) {
    for (i = 0; i < WORDS; i++) at1[i] = round_no * 1000 + i;
    run_workers(Reader);
    for (i = 0; i < 2; i++) {
      check(at0[i] == round_no * 100 + i && at1[i] == -(round_no * 100 + i), "the workers' writes before wait_for_end");
    }
  }
  run_workers(Pauser);
  run_workers(Subscriber);
  printf("ordering: ok\n");
  return 0;
}
