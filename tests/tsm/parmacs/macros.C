// SPDX-License-Identifier: BSD-3-Clause
/* Every PARMACS macro, and what SPLASH-2 programs rely on, checked from 1 to 8 nodes:
 *   macros -p P [-stdin] [-lines K]       all checks; prints "macros: ok" at the end
 *   macros -p P -bad WHAT                 one misuse (unlock, barrier-count, barrier-late,
 *                                         pause-deadlock, create, uninit, malloc, malloc-wrap),
 *                                         which must end the job
 *   macros -p 2 -slow                     a worker comes to a BARRIER, then to a SETPAUSE,
 *                                         2.5 s after main waits for them (the waits'
 *                                         notices, SQUALL_WAIT_NOTICE_S)
 *   macros -p P -exit worker|main         a worker on the last node, or main while the
 *                                         workers wait, calls exit(3) or exit(4): the job
 *                                         must end with that status
 * Macros appear with and without a trailing semicolon on purpose; the LOCK in this
 * comment is expanded by m4 too, harmlessly. */
#include <stdio.h>
#include <string.h>
#include <limits.h>
#include <errno.h>
#include <time.h>

MAIN_ENV

#define MAXP 16
#define SLOTS 8
#define ROUNDS 200
#define SUBS 1000

struct GlobalMemory {
  LOCKDEC(idlock)
  LOCKDEC(counter_lock)
  ALOCKDEC(slot_locks, SLOTS)
  BARDEC(start)         /* BARINIT without a count */
  BARDEC(counted)       /* BARINIT with one */
  PAUSEDEC(go)
  PAUSEDEC(spare)
  GSDEC(sub)
  long id;
  long counter;
  long slots[SLOTS];
  char taken[SUBS + 1];
  unsigned long clocks[MAXP];
  long sums[MAXP];
  long *blocks[MAXP];   /* G_MALLOC by each process after CREATE */
};

/* Plain globals, shared as under threads: set by main before CREATE, read by workers. */
struct GlobalMemory *Global;
int P = 1;
long data_table[4] = {11, 22, 33, 44}; /* .data */
long bss_table[4096];                  /* .bss */
char cwd[PATH_MAX];
char *program_name;                    /* points into main's argv: the same layout everywhere */
char program_copy[PATH_MAX];
char *input;                           /* G_MALLOC memory filled by fread */
long input_bytes;
long written_by_a_worker;              /* one worker writes it, others read it later */
long *early;                           /* G_MALLOC before MAIN_INITENV */
int lines = 0;

static void check(int ok, const char *what) {
  if (!ok) {
    printf("macros: FAILED %s\n", what);
    fflush(stdout);
    exit(2);
  }
}

static long my_id(void) {
  long id;
  LOCK(Global->idlock)
  id = Global->id++;
  UNLOCK(Global->idlock);
  return id;
}

void Work(void) {
  long id = my_id(), i, s, sum = 0;
  char here[PATH_MAX];
  BARRIER(Global->start, P)

  /* Globals and G_MALLOC memory main filled in, seen by every process. */
  check(data_table[2] == 330 && bss_table[4095] == 7 && early[0] == 99, "globals set by main");
  check(getcwd(here, sizeof here) != NULL && strcmp(here, cwd) == 0, "working directory");
  check(strcmp(program_name, program_copy) == 0, "a pointer into argv (same stack layout)");
  for (i = 0; i < input_bytes; i++) sum += input[i];
  Global->sums[id] = sum;

  /* G_MALLOC by a worker, placed at its own node or not; read by the next process. */
  Global->blocks[id] = (long *) G_MALLOC(64 * sizeof(long), id % 2 == 0 ? -1 : squall_nodes() - 1);
  for (i = 0; i < 64; i++) Global->blocks[id][i] = id * 1000 + i;
  BARRIER(Global->start, P)
  check(Global->blocks[(id + 1) % P][63] == ((id + 1) % P) * 1000 + 63, "G_MALLOC by a worker");

  /* Mutual exclusion: a read-modify-write with time between, under the lock. */
  for (i = 0; i < ROUNDS; i++) {
    long v;
    LOCK(Global->counter_lock);
    v = Global->counter;
    if (i % 16 == 0) usleep(10);
    Global->counter = v + 1;
    UNLOCK(Global->counter_lock)
    ALOCK(Global->slot_locks, i % SLOTS)
    Global->slots[i % SLOTS]++;
    AULOCK(Global->slot_locks, i % SLOTS);
  }
  LOCK(AGETL(Global->slot_locks, 0)) Global->slots[0] += 1000; UNLOCK(AGETL(Global->slot_locks, 0))

  /* Global subscripts: each of 0..SUBS handed out exactly once. */
  for (;;) {
    GETSUB(Global->sub, s, SUBS, P)
    if (s < 0) break;
    check(Global->taken[s] == 0, "GETSUB gave a subscript twice");
    Global->taken[s] = 1;
  }
  BARRIER(Global->counted);

  /* Pauses are semaphores: process 0 publishes one per other process. */
  if (id == 0) {
    written_by_a_worker = 4242;
    for (i = 1; i < P; i++) SETPAUSE(Global->go)
  } else {
    WAITPAUSE(Global->go);
    check(written_by_a_worker == 4242, "a plain global written by another process");
  }
  CLOCK(Global->clocks[id])
  BARRIER(Global->start, P);

  for (i = 0; i < lines; i++) {
    printf("line %ld %04ld ................................................................ end\n", id, i);
  }
}

void Second(void) {
  long id = my_id();
  BARRIER(Global->counted)
  if (id == 0) {
    SETPAUSE(Global->spare) SETPAUSE(Global->spare);
    CLEARPAUSE(Global->spare)
    SETPAUSE(Global->spare)
    WAITPAUSE(Global->spare) /* one was published after the clear: does not block */
  }
  BARRIER(Global->counted, P)
}

static void misuse(const char *what) {
  squall_parmacs_lock_t *stray = (squall_parmacs_lock_t *) G_MALLOC(sizeof(squall_parmacs_lock_t))
  if (strcmp(what, "unlock") == 0) UNLOCK(Global->counter_lock)
  if (strcmp(what, "uninit") == 0) LOCK(*stray)
  if (strcmp(what, "malloc") == 0) G_MALLOC((size_t) 1 << 40);
  if (strcmp(what, "malloc-wrap") == 0) G_MALLOC((size_t) -1);
  if (strcmp(what, "create") == 0) CREATE(Work, 64)
  if (strcmp(what, "barrier-count") == 0) BARRIER(Global->counted, P + 1)
  printf("macros: misuse '%s' was not reported\n", what);
  exit(3);
}

static void stuck(void) {
  my_id();
  WAITPAUSE(Global->spare) /* nobody publishes one */
}

/* One worker of the last node exits; the others wait for a pause nobody publishes (not a
 * barrier: node 0 would report it short of processes, which is not what is tested). */
long exiting_here; /* the workers of the last node count themselves */
static void exits(void) {
  if (squall_node() == squall_nodes() - 1 && __sync_fetch_and_add(&exiting_here, 1) == 0) exit(3);
  WAITPAUSE(Global->spare)
}

/* Sleeps the whole time: a signal may cut a sleep short (the runtime's poke, SIGURG, when the
 * thread enters the sleep just as a peer pokes it: kernel-free/src/common/poke.hpp), and a
 * SETPAUSE come early then left no wait long enough to be noticed (1 CI run). */
static void sleep_us(long us) {
  struct timespec left = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

/* The roles go by who runs them, main (node 0) and the one worker, not by my_id(): whichever
 * reached it first was process 0, and under load that was the worker (1 run in a loaded ASan
 * pass: node 1 waited, and node 0's notices were missing). */
static void slow_waiting(void) {
  BARRIER(Global->start, 2)
  WAITPAUSE(Global->go)
}

static void slow_coming(void) {
  sleep_us(2500000);
  BARRIER(Global->start, 2)
  sleep_us(2500000);
  SETPAUSE(Global->go)
}

static void late(void) {
  long id = my_id();
  if (id != 0) BARRIER(Global->start, P) /* process 0 never comes */
}

int main(int argc, char **argv) {
  const char *bad = NULL, *exiting = NULL;
  int from_stdin = 0, slowly = 0, i;
  FILE *f;
  char name[64], *out;

  early = (long *) G_MALLOC(sizeof(long) * 4);
  early[0] = 99;
  MAIN_INITENV(, 16000000)
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-p") == 0 && i + 1 < argc) P = atoi(argv[++i]);
    else if (strcmp(argv[i], "-bad") == 0 && i + 1 < argc) bad = argv[++i];
    else if (strcmp(argv[i], "-exit") == 0 && i + 1 < argc) exiting = argv[++i];
    else if (strcmp(argv[i], "-stdin") == 0) from_stdin = 1;
    else if (strcmp(argv[i], "-slow") == 0) slowly = 1;
    else if (strcmp(argv[i], "-lines") == 0 && i + 1 < argc) lines = atoi(argv[++i]);
  }
  check(P >= 1 && P <= MAXP, "-p from 1 to 16");

  Global = (struct GlobalMemory *) G_MALLOC(sizeof(struct GlobalMemory), 0);
  memset(Global, 0, sizeof *Global);
  LOCKINIT(Global->idlock);
  LOCKINIT(Global->counter_lock)
  ALOCKINIT(Global->slot_locks, SLOTS)
  BARINIT(Global->start)
  BARINIT(Global->counted, P);
  PAUSEINIT(Global->go)
  PAUSEINIT(Global->spare);
  GSINIT(Global->sub)
  data_table[2] *= 10;
  bss_table[4095] = 7;
  if (getenv("SQUALL_FAULT_PATH") != NULL && strcmp(getenv("SQUALL_FAULT_PATH"), "sigbus") == 0) {
    /* On the SIGBUS path a system call the runtime does not interpose fails on shared memory. */
    char here[PATH_MAX];
    check(getcwd(here, sizeof here) != NULL, "getcwd");
    strcpy(cwd, here);
  } else {
    check(getcwd(cwd, sizeof cwd) != NULL, "getcwd into a shared global");
  }
  program_name = argv[0];
  strncpy(program_copy, argv[0], sizeof program_copy - 1);

  /* An input file written from and read into shared memory (fwrite and fread). */
  out = (char *) NU_MALLOC(10000, P - 1);
  for (i = 0; i < 10000; i++) out[i] = (char) (i % 100);
  snprintf(name, sizeof name, "/tmp/squall-parmacs-%d", (int) getpid());
  f = fopen(name, "w");
  check(f != NULL && fwrite(out, 1, 10000, f) == 10000 && fclose(f) == 0, "writing the input file");
  input = (char *) G_MALLOC_F(10000);
  f = fopen(name, "r");
  input_bytes = f != NULL ? (long) fread(input, 1, 10000, f) : -1;
  check(input_bytes == 10000, "fread into G_MALLOC memory");
  fclose(f);
  unlink(name);
  G_FREE(out)

  if (from_stdin) {
    char line[128];
    check(fgets(line, sizeof line, stdin) != NULL, "standard input reaches main");
    printf("stdin: %s", line);
  }
  if (exiting != NULL && strcmp(exiting, "worker") == 0) {
    for (i = 1; i < P; i++) CREATE(exits)
    WAIT_FOR_END(P - 1)
    printf("macros: the job went on after a worker's exit\n");
  } else if (exiting != NULL) {
    for (i = 1; i < P; i++) CREATE(stuck)
    exit(4);
  }
  if (slowly) {
    CREATE(slow_coming)
    slow_waiting();
    WAIT_FOR_END(1)
    printf("macros: slow ok\n");
    MAIN_END
  }
  if (bad != NULL && strcmp(bad, "barrier-late") == 0) {
    CREATE(late, P);
    WAIT_FOR_END(P);
  } else if (bad != NULL && strcmp(bad, "pause-deadlock") == 0) {
    CREATE(stuck, P)
  } else if (bad != NULL) {
    misuse(bad);
  }

  /* The older form: CREATE in a loop, then main works too. */
  for (i = 1; i < P; i++) CREATE(Work)
  Work();
  WAIT_FOR_END(P - 1)
  check(Global->counter == (long) P * ROUNDS, "LOCK: mutual exclusion");
  for (i = 0; i < SLOTS; i++) check(Global->slots[i] == (long) P * ROUNDS / SLOTS + (i == 0) * 1000L * P, "ALOCK");
  for (i = 0; i <= SUBS; i++) check(Global->taken[i] == 1, "GETSUB gave every subscript");
  for (i = 0; i < P; i++) check(Global->sums[i] == 10000L / 100 * 4950, "every process read the input");
  for (i = 0; i < P; i++) {
    long d = (long) (Global->clocks[i] - Global->clocks[0]);
    check(d > -5000000 && d < 5000000, "CLOCK: one clock");
  }

  /* The newer form: CREATE(f, P) starts P-1 workers and runs f here. */
  Global->id = 0;
  CREATE(Second, P)
  WAIT_FOR_END(P);
  printf("macros: ok on %d processes\n", P);
  MAIN_END
}
