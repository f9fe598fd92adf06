// SPDX-License-Identifier: BSD-3-Clause
/* nbody.C: a few time steps of a direct (all-pairs) gravitational n-body computation,
 * SPLASH-2 style (as in water-nsquared), for Squall's PARMACS macros.
 *
 *   parmacs_nbody [-n bodies] [-s steps] [-p P]                (defaults 512, 4, 1)
 *   squallrun -n 4 parmacs_nbody -p4
 *
 * Every pair of bodies is computed once: body i meets the N/2 bodies after it (cyclically),
 * so every body has as many pairs as any other. The force of a pair goes to both bodies
 * (Newton's third law): each process adds its pairs into a private accumulator array, then
 * adds that array into the shared per-body forces under one lock per body. Forces are
 * summed in fixed point (each pair's force times 2^32, rounded to an int64), so the sums,
 * and the positions computed from them, do not depend on the order of the additions: the
 * checksum (a hash of the final positions and velocities) is the same for every P. The
 * forces of a step add up to exactly zero, which the program checks.
 *
 * Phases of a step, with a `BARRIER' after each: (1) pairs into the private accumulator,
 * for chunks of 16 bodies handed out by `GETSUB'; (2) the accumulator into the shared
 * forces, body by body under `ALOCK'/`AULOCK'; (3) each process moves its own block of
 * bodies and clears their forces.
 *
 * What it exercises: `MAIN_ENV'; `G_MALLOC' of the struct GlobalMemory holding `LOCKDEC',
 * `BARDEC', `GSDEC' and `ALOCKDEC' (one lock per body, `ALOCKINIT'); `NU_MALLOC'(size,
 * home) for each process's accumulator and `G_MALLOC'(size, home) for its block of bodies
 * (placement hints: process p's data homed at node p); the process id under `LOCK' from a
 * shared counter; `GSINIT'/`GETSUB'; `CREATE'(SlaveStart) in a loop with `WAIT_FOR_END';
 * `CLOCK'.
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <unistd.h>

#include "options.h"

MAIN_ENV

#define MAX_PROCS 64
#define MAX_BODIES 8192
#define FIX 4294967296.0      /* 2^32: fixed-point scale of the forces */
#define DT 0.01
#define EPS2 0.01             /* softening: r^2 + EPS2 */
#define CHUNK 16              /* bodies per subscript */

struct body {
  double pos[3], vel[3], mass;
  int64_t force[3];           /* this step's force, fixed point, summed under the body's lock */
};

struct GlobalMemory {
  LOCKDEC(idlock)             /* guards id */
  LOCKDEC(netlock)            /* guards netforce */
  BARDEC(bar)
  GSDEC(chunk)                /* the next chunk of bodies whose pairs to compute */
  long id;                    /* the next process id */
  int64_t netforce[3];        /* the sum of all forces over all steps: must stay 0 */
  unsigned long starttime, endtime;
  ALOCKDEC(bodylock, MAX_BODIES) /* one per body */
} *Global;

struct body *bodies[MAX_BODIES]; /* where body i is: in its owner's block */
long N = 512, steps = 4, P = 1;

#define FIRST(p) ((p) * N / P)  /* process p owns bodies FIRST(p) .. FIRST(p+1)-1 */
#define BODY(i) bodies[i]

/* Force on a from b, fixed point. */
static void pair_force(const struct body *a, const struct body *b, int64_t f[3])
{
  double d[3], r2 = EPS2, s;
  int k;
  for (k = 0; k < 3; k++) { d[k] = b->pos[k] - a->pos[k]; r2 += d[k] * d[k]; }
  s = a->mass * b->mass / (r2 * sqrt(r2));
  for (k = 0; k < 3; k++) f[k] = (int64_t) llrint(s * d[k] * FIX);
}

void SlaveStart(void)
{
  long MyNum, i, j, m, c, step, half, last;
  int k;
  int64_t (*acc)[3], f[3], net[3] = {0, 0, 0};
  unsigned long tstart, tend;

  LOCK(Global->idlock)
  MyNum = Global->id++;
  UNLOCK(Global->idlock)

  /* My private accumulator, in shared memory as SPLASH-2 keeps everything, homed at node
   * MyNum (only a hint: ids go in lock order, so process p need not run on node p). */
  acc = (int64_t (*)[3]) NU_MALLOC(N * sizeof *acc, MyNum);

  BARRIER(Global->bar, P)
  CLOCK(tstart)

  half = N / 2;
  for (step = 0; step < steps; step++) {
    /* (1) Pairs into my accumulator, for chunks of bodies handed out by `GETSUB' (a
     * self-scheduled loop: a process that gets more of the cores takes more chunks). */
    for (i = 0; i < N; i++) acc[i][0] = acc[i][1] = acc[i][2] = 0;
    for (;;) {
      GETSUB(Global->chunk, c, (N + CHUNK - 1) / CHUNK - 1, P)
      if (c < 0) break;       /* every process gets -1 once the chunks are gone */
      for (i = c * CHUNK; i < N && i < (c + 1) * CHUNK; i++) {
        /* With N even, the pair at distance N/2 would be met from both ends: keep one. */
        last = (N % 2 == 0 && i >= half) ? half - 1 : half;
        for (m = 1; m <= last; m++) {
          j = (i + m) % N;
          pair_force(BODY(i), BODY(j), f);
          for (k = 0; k < 3; k++) { acc[i][k] += f[k]; acc[j][k] -= f[k]; }
        }
      }
    }
    BARRIER(Global->bar, P)

    /* (2) Into the shared forces, one body at a time under its lock; each process starts
     * at its own block, so that they meet as little as possible. */
    for (m = 0; m < N; m++) {
      i = (FIRST(MyNum) + m) % N;
      ALOCK(Global->bodylock, i)
      for (k = 0; k < 3; k++) BODY(i)->force[k] += acc[i][k];
      AULOCK(Global->bodylock, i)
    }
    BARRIER(Global->bar, P)

    /* (3) Move my bodies, from the exact sums (semi-implicit Euler: kick, then drift). */
    for (i = FIRST(MyNum); i < FIRST(MyNum + 1); i++) {
      struct body *b = BODY(i);
      for (k = 0; k < 3; k++) {
        net[k] += b->force[k];
        b->vel[k] += DT * ((double) b->force[k] / FIX) / b->mass;
        b->pos[k] += DT * b->vel[k];
        b->force[k] = 0;
      }
    }
    BARRIER(Global->bar, P)
  }
  CLOCK(tend)

  LOCK(Global->netlock)
  for (k = 0; k < 3; k++) Global->netforce[k] += net[k];
  UNLOCK(Global->netlock)
  /* Process 0's times reach GlobalMemory only now: a store into a page that the others
   * keep reading would take it from all of them. */
  if (MyNum == 0) { Global->starttime = tstart; Global->endtime = tend; }
  NU_FREE(acc)
}

int main(int argc, char *argv[])
{
  int c, k;
  long i, p;
  unsigned long hash = 1469598103934665603UL, bits;
  double kinetic = 0.0;

  MAIN_INITENV(,1000000)
  while ((c = getopt(argc, argv, "n:s:p:h")) != -1) {
    switch (c) {
    case 'n': N = option_long("nbody", 'n', optarg); break;
    case 's': steps = option_long("nbody", 's', optarg); break;
    case 'p': P = option_long("nbody", 'p', optarg); break;
    default:
      fprintf(stderr, "usage: %s [-n bodies] [-s steps] [-p P]\n", argv[0]);
      exit(c == 'h' ? 0 : OPTION_REFUSED);
    }
  }
  option_no_operands(argc, argv, optind);
  if (N < 2 || N > MAX_BODIES || steps < 1 || P < 1 || P > MAX_PROCS || P > N) {
    fprintf(stderr, "nbody: need 2 <= bodies <= %d, steps >= 1, 1 <= P <= min(%d, bodies)\n",
            MAX_BODIES, MAX_PROCS);
    exit(OPTION_REFUSED);
  }

  Global = (struct GlobalMemory *) G_MALLOC(sizeof(struct GlobalMemory))
  Global->id = 0;
  Global->netforce[0] = Global->netforce[1] = Global->netforce[2] = 0;
  for (p = 0; p < P; p++) {  /* process p's block of bodies, homed at node p (a hint) */
    struct body *block = (struct body *) G_MALLOC((FIRST(p + 1) - FIRST(p)) * sizeof(struct body), p)
    for (i = FIRST(p); i < FIRST(p + 1); i++) bodies[i] = block + (i - FIRST(p));
  }

  /* Bodies in a 10 x 10 x 10 box, at rest, masses from 0.5 to 1.5: all from a
   * pseudo-random generator that depends only on the body. */
  for (i = 0; i < N; i++) {
    struct body *b = BODY(i);
    unsigned long x = 88172645463325252UL ^ (unsigned long) i * 0x9e3779b97f4a7c15UL;
    for (k = 0; k < 4; k++) {
      x ^= x << 13; x ^= x >> 7; x ^= x << 17;
      if (k < 3) b->pos[k] = 10.0 * (double)(x >> 11) / 9007199254740992.0;
      else b->mass = 0.5 + (double)(x >> 11) / 9007199254740992.0;
    }
  }
  LOCKINIT(Global->idlock)
  LOCKINIT(Global->netlock)
  BARINIT(Global->bar, P)
  GSINIT(Global->chunk)
  ALOCKINIT(Global->bodylock, N)

  for (p = 1; p < P; p++) CREATE(SlaveStart)
  SlaveStart();
  WAIT_FOR_END(P - 1)

  /* FNV-1a over the bits of every position and velocity, in body order. */
  for (i = 0; i < N; i++) {
    struct body *b = BODY(i);
    kinetic += 0.5 * b->mass * (b->vel[0] * b->vel[0] + b->vel[1] * b->vel[1] + b->vel[2] * b->vel[2]);
    for (k = 0; k < 6; k++) {
      double v = k < 3 ? b->pos[k] : b->vel[k - 3];
      int byte;
      memcpy(&bits, &v, sizeof bits);
      for (byte = 0; byte < 8; byte++) { hash ^= (bits >> (8 * byte)) & 0xff; hash *= 1099511628211UL; }
    }
  }
  printf("n-body: %ld bodies, %ld steps, %ld processes\n", N, steps, P);
  printf("time %lu us; kinetic energy %.6e; net force %lld %lld %lld (must be 0)\n",
         Global->endtime - Global->starttime, kinetic, (long long) Global->netforce[0],
         (long long) Global->netforce[1], (long long) Global->netforce[2]);
  printf("checksum: %016lx\n", hash);
  if (Global->netforce[0] != 0 || Global->netforce[1] != 0 || Global->netforce[2] != 0) exit(1);
  MAIN_END
}
