// SPDX-License-Identifier: BSD-3-Clause
/* sor.C: red-black successive over-relaxation for the Laplace equation on an N x N grid,
 * SPLASH-2 style, for Squall's PARMACS macros.
 *
 *   parmacs_sor [-n N] [-i iterations] [-w omega] [-p P]      (defaults 258, 50, 1.5, 1)
 *   squallrun -n 4 parmacs_sor -p4
 *
 * Each process owns a block of consecutive rows and updates the red points ((i + j) even)
 * of its rows, then, after a `BARRIER', the black ones. A point is computed only from points
 * of the other colour, so the result does not depend on P: the checksum (the sum of the grid,
 * taken by main in a fixed order) is the same for every P.
 *
 * Laid out for a page-based shared memory: the grid is kept as two half-grids, one per
 * colour, and each process's rows of each half-grid are an allocation of their own (whole
 * pages, homed at the process's node). Processes share only the rows at the edges of their
 * blocks, no page is written by two processes, and during a half-sweep a page is either
 * written (by its owner) or read, never both.
 *
 * What it exercises: `MAIN_ENV', `MAIN_INITENV', `MAIN_END'; `G_MALLOC' of a struct
 * GlobalMemory whose pointer is a plain global, with `LOCKDEC' and `BARDEC' inside it, and
 * `G_MALLOC'(size, home) for each process's rows (a placement hint: process p at node p);
 * `LOCKINIT'/`LOCK'/`UNLOCK' for the process id (from a shared counter) and for a max
 * reduction; `BARINIT'/`BARRIER' between half-sweeps; the loop form of `CREATE' (P - 1
 * workers, then main works too) with `WAIT_FOR_END'(P - 1); `CLOCK' for the timing.
 * (Macro names in comments are quoted for m4, which would otherwise expand them.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <unistd.h>

#include "options.h"

MAIN_ENV

#define MAX_PROCS 64
#define PAGE 4096
#define G(i, j) rb[((i) + (j)) & 1][i][(j) >> 1]  /* point (i, j), in its colour's half */
#define FIRST(p) ((p) == 0 ? 0 : 1 + (p) * (N - 2) / P)  /* process p has rows FIRST(p) .. */
#define LAST(p) ((p) == P - 1 ? N : 1 + ((p) + 1) * (N - 2) / P)  /* .. LAST(p) - 1 */

struct GlobalMemory {
  LOCKDEC(idlock)           /* guards id */
  LOCKDEC(maxlock)          /* guards maxchange */
  BARDEC(sweep)             /* between half-sweeps */
  long id;                  /* the next process id */
  double maxchange;         /* largest change of a point in the last iteration */
  unsigned long starttime, endtime;
} *Global;

double **rb[2];             /* rb[c][i][j / 2]: point (i, j) of colour c = (i + j) % 2 */
long N = 258;
long iterations = 50;
double omega = 1.5;
long P = 1;

/* One half-sweep over rows [first, last) for the points of one colour; returns the
 * largest change it made. */
static double relax(long first, long last, int colour)
{
  double maxchange = 0.0;
  long i, j;
  for (i = first; i < last; i++) {
    for (j = 1 + ((i + 1 + colour) & 1); j < N - 1; j += 2) {
      double old = G(i, j);
      double avg = 0.25 * (G(i - 1, j) + G(i + 1, j) + G(i, j - 1) + G(i, j + 1));
      double next = old + omega * (avg - old);
      double change = fabs(next - old);
      G(i, j) = next;
      if (change > maxchange) maxchange = change;
    }
  }
  return maxchange;
}

void SlaveStart(void)
{
  long MyNum, first, last, i, j, it;
  unsigned long tstart, tend;
  double mymax = 0.0, red, black;

  LOCK(Global->idlock)
  MyNum = Global->id++;
  UNLOCK(Global->idlock)

  /* Each process initialises its own rows, so they start in its cache. Boundary: the top
   * row is 1, the left column falls from 1 at the top to 0 at the bottom, the rest of the
   * boundary is 0; the interior starts at 0. */
  for (i = FIRST(MyNum); i < LAST(MyNum); i++)
    for (j = 0; j < N; j++)
      G(i, j) = i == 0 ? 1.0 : (j == 0 && i < N - 1) ? (double)(N - 1 - i) / (double)(N - 1) : 0.0;
  first = FIRST(MyNum) == 0 ? 1 : FIRST(MyNum);     /* the interior rows I update */
  last = LAST(MyNum) == N ? N - 1 : LAST(MyNum);

  BARRIER(Global->sweep, P)
  CLOCK(tstart)

  for (it = 0; it < iterations; it++) {
    red = relax(first, last, 0);
    BARRIER(Global->sweep, P)
    black = relax(first, last, 1);
    BARRIER(Global->sweep, P)
    mymax = red > black ? red : black;
  }

  /* The max over processes is exact, so it does not depend on the order of arrival. */
  LOCK(Global->maxlock)
  if (mymax > Global->maxchange) Global->maxchange = mymax;
  UNLOCK(Global->maxlock)

  BARRIER(Global->sweep, P)
  CLOCK(tend)
  /* Process 0's times reach GlobalMemory only now: a store into a page that the others
   * keep reading would take it from all of them. */
  if (MyNum == 0) { Global->starttime = tstart; Global->endtime = tend; }
}

int main(int argc, char *argv[])
{
  int c;
  long i, j, p, half;
  double sum = 0.0;

  MAIN_INITENV(,1000000)
  while ((c = getopt(argc, argv, "n:i:w:p:h")) != -1) {
    switch (c) {
    case 'n': N = option_long("sor", 'n', optarg); break;
    case 'i': iterations = option_long("sor", 'i', optarg); break;
    case 'w': omega = option_double("sor", 'w', optarg); break;
    case 'p': P = option_long("sor", 'p', optarg); break;
    default:
      fprintf(stderr, "usage: %s [-n N] [-i iterations] [-w omega] [-p P]\n", argv[0]);
      exit(c == 'h' ? 0 : OPTION_REFUSED);
    }
  }
  option_no_operands(argc, argv, optind);
  /* SOR converges only for 0 < omega < 2: outside, the sweeps diverge or stand still. */
  if (N < 3 || iterations < 1 || !(omega > 0 && omega < 2) || P < 1 || P > MAX_PROCS || P > N - 2) {
    fprintf(stderr, "sor: need N >= 3, iterations >= 1, 0 < omega < 2, 1 <= P <= min(%d, N - 2)\n", MAX_PROCS);
    exit(OPTION_REFUSED);
  }

  half = (N + 1) / 2;         /* points of one colour in a row, at most */
  Global = (struct GlobalMemory *) G_MALLOC(sizeof(struct GlobalMemory))
  for (c = 0; c < 2; c++) {   /* row pointers: whole pages, which nothing else shares */
    rb[c] = (double **) G_MALLOC((N * sizeof(double *) + PAGE - 1) / PAGE * PAGE)
    for (p = 0; p < P; p++) { /* process p's rows of colour c, homed at node p */
      double *block = (double *) G_MALLOC((LAST(p) - FIRST(p)) * half * sizeof(double), p)
      for (i = FIRST(p); i < LAST(p); i++) rb[c][i] = block + (i - FIRST(p)) * half;
    }
  }
  Global->id = 0;
  Global->maxchange = 0.0;
  LOCKINIT(Global->idlock)
  LOCKINIT(Global->maxlock)
  BARINIT(Global->sweep, P)

  for (i = 1; i < P; i++) CREATE(SlaveStart)
  SlaveStart();
  WAIT_FOR_END(P - 1)

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) sum += G(i, j);

  printf("SOR: %ld x %ld grid, %ld iterations, omega %.2f, %ld processes\n", N, N, iterations, omega, P);
  printf("time %lu us, largest change in the last iteration %.6e\n",
         Global->endtime - Global->starttime, Global->maxchange);
  printf("checksum: %.15e\n", sum);
  MAIN_END
}
