// SPDX-License-Identifier: BSD-3-Clause
/* lu.C: blocked LU factorisation of a dense N x N matrix without pivoting, SPLASH-2 style
 * (as in SPLASH-2's LU with contiguous blocks), for Squall's PARMACS macros.
 *
 *   parmacs_lu [-n N] [-b B] [-p P]                            (defaults 256, 16, 1)
 *   squallrun -n 4 parmacs_lu -p4
 *
 * The matrix is kept as (N/B)^2 blocks of B x B doubles, each block contiguous (whole pages
 * when B is 32 or more) and homed at the node of the process that owns it: block (I, J)
 * belongs to process (I * NB + J) % P. Step K: the owner of the diagonal block factors it;
 * after a `BARRIER' the owners of the blocks of row K and column K divide them by it; after
 * another, every owner updates its blocks of the trailing matrix. Every element goes through
 * the same operations in the same order for every P, so the checksum (the sum of the
 * factors, taken by main in a fixed order) is the same for every P.
 *
 * The matrix is diagonally dominant (random entries in [0, 1) plus N on the diagonal), so no
 * pivoting is needed. Main checks the factors: L times U gives back the matrix (every row
 * for N <= 512, else every 16th), within 1e-9 relative.
 *
 * What it exercises: `MAIN_ENV'; `G_MALLOC'(size, home) for each block (a placement hint:
 * its owner); the process id under `LOCK'; `BARRIER' between the phases of a step;
 * `CREATE'(f, P) with `WAIT_FOR_END'; `CLOCK'.
 */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <unistd.h>

#include "options.h"

MAIN_ENV

#define MAX_PROCS 64

struct GlobalMemory {
  LOCKDEC(idlock)           /* guards id */
  BARDEC(step)
  long id;                  /* the next process id */
  unsigned long starttime, endtime;
} *Global;

double **blocks;            /* blocks[I * NB + J]: block (I, J), B x B, row-major */
long N = 256, B = 16, NB, P = 1;

#define BLOCK(I, J) blocks[(I) * NB + (J)]
#define OWNER(I, J) (((I) * NB + (J)) % P)

/* The matrix's element (i, j), the same wherever it is computed: a hash of (i, j) in [0, 1),
 * plus N on the diagonal. */
static double element(long i, long j)
{
  unsigned long x = (unsigned long) i * 0x9e3779b97f4a7c15ul + (unsigned long) j * 0xc2b2ae3d27d4eb4ful + 1;
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ul;
  x ^= x >> 29;
  return (double) (x >> 11) / 9007199254740992.0 + (i == j ? (double) N : 0.0);
}

/* In place: the block becomes L (unit lower, below the diagonal) and U (upper). */
static void factor(double *a)
{
  long i, j, k;
  for (k = 0; k < B; k++)
    for (i = k + 1; i < B; i++) {
      double l = a[i * B + k] /= a[k * B + k];
      for (j = k + 1; j < B; j++) a[i * B + j] -= l * a[k * B + j];
    }
}

/* a = L(d)^-1 a, for a block of row K (d the diagonal block). */
static void lower_solve(const double *d, double *a)
{
  long i, j, k;
  for (k = 0; k < B; k++)
    for (i = k + 1; i < B; i++) {
      double l = d[i * B + k];
      for (j = 0; j < B; j++) a[i * B + j] -= l * a[k * B + j];
    }
}

/* a = a U(d)^-1, for a block of column K. */
static void upper_solve(const double *d, double *a)
{
  long i, j, k;
  for (i = 0; i < B; i++)
    for (k = 0; k < B; k++) {
      double v = a[i * B + k] /= d[k * B + k];
      for (j = k + 1; j < B; j++) a[i * B + j] -= v * d[k * B + j];
    }
}

/* c -= a b */
static void update(const double *a, const double *b, double *c)
{
  long i, j, k;
  for (i = 0; i < B; i++)
    for (k = 0; k < B; k++) {
      double v = a[i * B + k];
      for (j = 0; j < B; j++) c[i * B + j] -= v * b[k * B + j];
    }
}

void SlaveStart(void)
{
  long MyNum, I, J, K, i, j;
  unsigned long tstart, tend;

  LOCK(Global->idlock)
  MyNum = Global->id++;
  UNLOCK(Global->idlock)

  /* Each process fills its own blocks. */
  for (I = 0; I < NB; I++)
    for (J = 0; J < NB; J++)
      if (OWNER(I, J) == MyNum)
        for (i = 0; i < B; i++)
          for (j = 0; j < B; j++) BLOCK(I, J)[i * B + j] = element(I * B + i, J * B + j);

  BARRIER(Global->step, P)
  CLOCK(tstart)
  for (K = 0; K < NB; K++) {
    if (OWNER(K, K) == MyNum) factor(BLOCK(K, K));
    BARRIER(Global->step, P)
    for (J = K + 1; J < NB; J++) {
      if (OWNER(K, J) == MyNum) lower_solve(BLOCK(K, K), BLOCK(K, J));
      if (OWNER(J, K) == MyNum) upper_solve(BLOCK(K, K), BLOCK(J, K));
    }
    BARRIER(Global->step, P)
    for (I = K + 1; I < NB; I++)
      for (J = K + 1; J < NB; J++)
        if (OWNER(I, J) == MyNum) update(BLOCK(I, K), BLOCK(K, J), BLOCK(I, J));
  }
  BARRIER(Global->step, P)
  CLOCK(tend)
  if (MyNum == 0) { Global->starttime = tstart; Global->endtime = tend; }
}

/* Element (i, j) of the factors. */
static double at(long i, long j) { return BLOCK(i / B, j / B)[(i % B) * B + j % B]; }

int main(int argc, char *argv[])
{
  int c;
  long I, J, i, j, k, stride;
  double sum = 0.0, worst = 0.0;

  MAIN_INITENV(,1000000)
  while ((c = getopt(argc, argv, "n:b:p:h")) != -1) {
    switch (c) {
    case 'n': N = option_long("lu", 'n', optarg); break;
    case 'b': B = option_long("lu", 'b', optarg); break;
    case 'p': P = option_long("lu", 'p', optarg); break;
    default:
      fprintf(stderr, "usage: %s [-n N] [-b B] [-p P]\n", argv[0]);
      exit(c == 'h' ? 0 : OPTION_REFUSED);
    }
  }
  option_no_operands(argc, argv, optind);
  if (B < 1 || N < B || N % B != 0 || P < 1 || P > MAX_PROCS) {
    fprintf(stderr, "lu: need B >= 1, N a multiple of B, 1 <= P <= %d\n", MAX_PROCS);
    exit(OPTION_REFUSED);
  }
  NB = N / B;

  Global = (struct GlobalMemory *) G_MALLOC(sizeof(struct GlobalMemory))
  blocks = (double **) G_MALLOC(NB * NB * sizeof(double *))
  for (I = 0; I < NB; I++)
    for (J = 0; J < NB; J++) BLOCK(I, J) = (double *) G_MALLOC(B * B * sizeof(double), OWNER(I, J))
  Global->id = 0;
  LOCKINIT(Global->idlock)
  BARINIT(Global->step, P)

  CREATE(SlaveStart, P)
  WAIT_FOR_END(P - 1)

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) sum += at(i, j);
  /* L U against the matrix, row by row (L unit lower, U upper). */
  stride = N <= 512 ? 1 : 16;
  for (i = 0; i < N; i += stride)
    for (j = 0; j < N; j++) {
      double v = 0.0;
      for (k = 0; k <= (i < j ? i : j); k++) v += (k == i ? 1.0 : at(i, k)) * at(k, j);
      if (fabs(v - element(i, j)) / N > worst) worst = fabs(v - element(i, j)) / N;
    }

  printf("LU: %ld x %ld matrix, %ld x %ld blocks, %ld processes\n", N, N, B, B, P);
  printf("time %lu us; L U %s the matrix (largest error %.1e of N)\n", Global->endtime - Global->starttime,
         worst < 1e-9 ? "gives back" : "DOES NOT give back", worst);
  printf("checksum: %.15e\n", sum);
  MAIN_END
}
