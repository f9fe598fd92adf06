// SPDX-License-Identifier: BSD-3-Clause
/* radix.C: parallel radix sort of N pseudo-random integer keys, SPLASH-2 style, for
 * Squall's PARMACS macros.
 *
 *   parmacs_radix [-n keys] [-r radix] [-m maxkey] [-p P]   (defaults 262144, 256, 2^24, 1)
 *   squallrun -n 4 parmacs_radix -p4
 *
 * Each pass sorts on one digit (log2(radix) bits), least significant first:
 *  1. every process buckets its own chunk of the keys by digit into private memory and
 *     publishes its histogram (one row of the shared per-process histograms);
 *  2. a two-level parallel prefix sum: process p takes a slice of the digits, and for each
 *     of them adds up the histograms of all processes, which gives every process's place
 *     within that digit (kept in p's part of the shared place table) and the slice's total;
 *     process 0 gathers the slice totals, turns them into slice bases and hands them back;
 *     then every process adds its slice's base to its part of the table;
 *  3. every process picks its places out of all parts of the table, then copies each of
 *     its digit runs, whole, to its place in the other array.
 * Keys are integers and the sorted order is unique, so the checksum (a hash of the sorted
 * array) is the same for every P. Each process checks that its part of the result is in
 * order and that no key was lost (the key sum before and after).
 *
 * Each process's histogram row and its part of the place table are allocations of whole
 * pages of their own, so that steps 1 and 2 write no page from two processes (a layout
 * with one row of places per process, written by every slice, was 3 to 4 times slower).
 * The copies of step 3 do write pages from several processes: that is the sort.
 *
 * What it exercises: `MAIN_ENV'; `G_MALLOC' of the struct GlobalMemory and of the key
 * arrays; `G_MALLOC'(size, home) for each process's histogram row and part of the place
 * table (placement hints: process p's at node p);
 * `LOCK'/`UNLOCK' for the process id and for the check totals; `BARRIER'; a pause used as
 * a semaphore in step 2 (`SETPAUSE' publishes one, `WAITPAUSE' waits for one and takes
 * it): every process publishes one when its slice total is in, process 0 takes P of them,
 * computes the bases and publishes P - 1, one per waiting process; the newer form
 * `CREATE'(SlaveStart, P), which starts P - 1 workers and runs SlaveStart in main, with
 * `WAIT_FOR_END'(P); `CLOCK'.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "options.h"

MAIN_ENV

#define MAX_PROCS 64
#define PAGE 4096
#define PAGES(bytes) (((bytes) + PAGE - 1) / PAGE * PAGE)
#define DLO(s) ((s) * radix / P)  /* process s's slice of the digits: DLO(s) .. DLO(s+1)-1 */

struct GlobalMemory {
  LOCKDEC(idlock)             /* guards id */
  LOCKDEC(checklock)          /* guards the check totals */
  BARDEC(bar)
  PAUSEDEC(slicedone)         /* one per process whose slice total is in */
  PAUSEDEC(basesready)        /* one per process that may read its slice base */
  long id;                    /* the next process id */
  long slicetotal[MAX_PROCS]; /* keys whose digit is in process p's slice, this pass */
  long slicebase[MAX_PROCS];  /* keys whose digit is in a lower slice */
  unsigned long sum_before, sum_after, hash;
  long out_of_order;
  unsigned long starttime, endtime;
} *Global;

unsigned int *keys[2];        /* the keys, and where each pass puts them */
long *hist[MAX_PROCS];        /* hist[p][d]: keys of process p with digit d */
long *place[MAX_PROCS];       /* place[s][(d - DLO(s)) * P + p]: where they go (d in slice s) */
long N = 1L << 18, radix = 256, maxkey = 1L << 24, P = 1;
int bits, passes;

static unsigned long mix(unsigned long x) /* splitmix64's finaliser */
{
  x ^= x >> 30; x *= 0xbf58476d1ce4e5b9UL;
  x ^= x >> 27; x *= 0x94d049bb133111ebUL;
  return x ^ (x >> 31);
}

void SlaveStart(void)
{
  long MyNum, lo, hi, dlo, dhi, i, d, q, k, pass, run, start, wrong = 0;
  unsigned long sum = 0, hash = 0, tstart, tend;
  unsigned int *from, *to, *mine;
  long *count, *offset, *total, *where;

  LOCK(Global->idlock)
  MyNum = Global->id++;
  UNLOCK(Global->idlock)

  lo = MyNum * N / P;         /* my chunk of the keys */
  hi = (MyNum + 1) * N / P;
  dlo = DLO(MyNum);           /* my slice of the digits */
  dhi = DLO(MyNum + 1);
  mine = (unsigned int *) malloc((hi - lo + 1) * sizeof(unsigned int)); /* private */
  count = (long *) malloc(4 * radix * sizeof(long));
  offset = count + radix;
  total = offset + radix;
  where = total + radix;

  /* Key i depends only on i, so the input does not depend on P. */
  for (i = lo; i < hi; i++) {
    keys[0][i] = (unsigned int)(mix((unsigned long)i + 12345) % (unsigned long)maxkey);
    sum += keys[0][i];
  }
  LOCK(Global->checklock)
  Global->sum_before += sum;
  UNLOCK(Global->checklock)

  BARRIER(Global->bar, P)
  CLOCK(tstart)

  for (pass = 0; pass < passes; pass++) {
    int shift = pass * bits;
    from = keys[pass & 1];
    to = keys[(pass + 1) & 1];

    /* 1. Histogram and bucket my chunk, privately; publish the histogram. */
    for (d = 0; d < radix; d++) count[d] = 0;
    for (i = lo; i < hi; i++) count[(from[i] >> shift) & (radix - 1)]++;
    for (run = 0, d = 0; d < radix; d++) { offset[d] = run; run += count[d]; }
    for (i = lo; i < hi; i++) mine[offset[(from[i] >> shift) & (radix - 1)]++] = from[i];
    for (d = 0; d < radix; d++) hist[MyNum][d] = count[d];
    BARRIER(Global->bar, P)

    /* 2. Prefix sums over my slice of the digits: each process's place within a digit. */
    for (run = 0, d = dlo; d < dhi; d++) {
      long within = 0;
      for (q = 0; q < P; q++) { place[MyNum][(d - dlo) * P + q] = within; within += hist[q][d]; }
      total[d] = within;
      run += within;
    }
    Global->slicetotal[MyNum] = run;
    SETPAUSE(Global->slicedone)
    if (MyNum == 0) {           /* gather the slice totals, hand back the bases */
      long base = 0;
      for (q = 0; q < P; q++) WAITPAUSE(Global->slicedone)
      for (q = 0; q < P; q++) { Global->slicebase[q] = base; base += Global->slicetotal[q]; }
      for (q = 1; q < P; q++) SETPAUSE(Global->basesready)
    } else {
      WAITPAUSE(Global->basesready)
    }
    for (start = Global->slicebase[MyNum], d = dlo; d < dhi; d++) {
      for (q = 0; q < P; q++) place[MyNum][(d - dlo) * P + q] += start;
      start += total[d];
    }
    BARRIER(Global->bar, P)

    /* 3. Copy my runs to their places, starting at my own slice of the digits so that
     * the processes begin in different parts of the target. */
    for (q = 0; q < P; q++)
      for (d = DLO(q); d < DLO(q + 1); d++) where[d] = place[q][(d - DLO(q)) * P + MyNum];
    for (run = 0, d = 0; d < radix; d++) { offset[d] = run; run += count[d]; }
    for (k = 0; k < radix; k++) {
      d = (k + dlo) % radix;
      for (i = 0; i < count[d]; i++) to[where[d] + i] = mine[offset[d] + i];
    }
    BARRIER(Global->bar, P)
  }
  CLOCK(tend)

  /* Check my chunk of the result (and the key before it), hash it, add to the totals. */
  from = keys[passes & 1];
  sum = 0;
  for (i = lo; i < hi; i++) {
    if (i > 0 && from[i - 1] > from[i]) wrong++;
    sum += from[i];
    hash += mix(((unsigned long)i << 32) | from[i]);
  }
  LOCK(Global->checklock)
  Global->sum_after += sum;
  Global->hash += hash;
  Global->out_of_order += wrong;
  UNLOCK(Global->checklock)
  /* Process 0's times reach GlobalMemory only now: a store into a page that the others
   * keep reading would take it from all of them. */
  if (MyNum == 0) { Global->starttime = tstart; Global->endtime = tend; }
  free(count);
  free(mine);
}

int main(int argc, char *argv[])
{
  int c;
  long p;

  MAIN_INITENV(,1000000)
  while ((c = getopt(argc, argv, "n:r:m:p:h")) != -1) {
    switch (c) {
    case 'n': N = option_long("radix", 'n', optarg); break;
    case 'r': radix = option_long("radix", 'r', optarg); break;
    case 'm': maxkey = option_long("radix", 'm', optarg); break;
    case 'p': P = option_long("radix", 'p', optarg); break;
    default:
      fprintf(stderr, "usage: %s [-n keys] [-r radix] [-m maxkey] [-p P]\n", argv[0]);
      exit(c == 'h' ? 0 : OPTION_REFUSED);
    }
  }
  option_no_operands(argc, argv, optind);
  for (bits = 0; bits <= 16 && (1L << bits) < radix; bits++) {}  /* 17: too large (no 1L << 63) */
  if (N < 1 || radix < 2 || (1L << bits) != radix || bits > 16 || maxkey < 2 || maxkey > (1L << 32) ||
      P < 1 || P > MAX_PROCS || P > radix) {
    fprintf(stderr, "radix: need keys >= 1, radix a power of 2 from 2 to 65536, 2 <= maxkey <= 2^32, "
                    "1 <= P <= min(%d, radix)\n", MAX_PROCS);
    exit(OPTION_REFUSED);
  }
  for (passes = 1; passes * bits < 64 && (1UL << (passes * bits)) < (unsigned long)maxkey; passes++) {}

  Global = (struct GlobalMemory *) G_MALLOC(sizeof(struct GlobalMemory))
  keys[0] = (unsigned int *) G_MALLOC(N * sizeof(unsigned int))
  keys[1] = (unsigned int *) G_MALLOC(N * sizeof(unsigned int))
  for (p = 0; p < P; p++) {   /* process p's, homed at node p (a hint), whole pages */
    hist[p] = (long *) G_MALLOC(PAGES(radix * sizeof(long)), p)
    place[p] = (long *) G_MALLOC(PAGES((DLO(p + 1) - DLO(p)) * P * sizeof(long)), p)
  }
  Global->id = 0;
  Global->sum_before = Global->sum_after = Global->hash = 0;
  Global->out_of_order = 0;
  LOCKINIT(Global->idlock)
  LOCKINIT(Global->checklock)
  BARINIT(Global->bar, P)
  PAUSEINIT(Global->slicedone)
  PAUSEINIT(Global->basesready)

  CREATE(SlaveStart, P)
  WAIT_FOR_END(P)

  printf("radix sort: %ld keys below %ld, radix %ld (%d passes), %ld processes\n", N, maxkey, radix,
         passes, P);
  printf("time %lu us; %s\n", Global->endtime - Global->starttime,
         Global->out_of_order == 0 && Global->sum_before == Global->sum_after ? "sorted, no key lost"
                                                                                : "NOT SORTED");
  printf("checksum: %016lx\n", Global->hash);
  if (Global->out_of_order != 0 || Global->sum_before != Global->sum_after) exit(1);
  MAIN_END
}
