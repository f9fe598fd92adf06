// SPDX-License-Identifier: BSD-3-Clause
/* fft.C: a one-dimensional complex FFT of N = 2^M points by the six-step method, SPLASH-2
 * style (as SPLASH-2's FFT: the data as a sqrt(N) x sqrt(N) matrix, transposes between row
 * FFTs), for Squall's PARMACS macros.
 *
 *   parmacs_fft [-m M] [-p P]                                   (defaults 16, 1; M even)
 *   squallrun -n 4 parmacs_fft -p4
 *
 * With R = 2^(M/2) and the point n = n1 + R n2: transpose, R FFTs of length R over n2,
 * multiply by the twiddles w_N^(n1 k2), transpose, R FFTs over n1, transpose; the result is
 * in natural order. Each process owns a block of R / P consecutive rows of each matrix (homed
 * at its node): the row FFTs and the twiddles touch only its rows, a transpose reads a column
 * of blocks from every other process, the communication SPLASH-2's FFT has. A `BARRIER'
 * follows each step. Every point goes through the same operations for every P, so the
 * checksum (a hash of the bits of the transform) is the same for every P. Main checks the
 * transform: the inverse (by conjugation, run again) gives back the input within 1e-9.
 *
 * What it exercises: `MAIN_ENV'; `G_MALLOC'(size, home) for each process's rows; the process
 * id under `LOCK'; `BARRIER'; `CREATE'(f, P) with `WAIT_FOR_END', twice (forward, inverse);
 * `CLOCK'.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>

#include "options.h"

MAIN_ENV

#define MAX_PROCS 64

typedef struct { double re, im; } cplx;

struct GlobalMemory {
  LOCKDEC(idlock)           /* guards id */
  BARDEC(step)
  long id;                  /* the next process id */
  unsigned long starttime, endtime;
} *Global;

cplx **x, **y;              /* x[r], y[r]: row r of the two R x R matrices */
cplx *row_roots;            /* w_R^k, k < R / 2 */
long M = 16, N, R, P = 1;
int inverse;                /* conjugate in and out: the inverse transform, times N */

#define FIRST(p) ((p) * R / P)

/* The input: a hash of n in [-1, 1) for both parts. */
static double input(long n, int part)
{
  unsigned long v = (unsigned long) n * 0x9e3779b97f4a7c15ul + (unsigned long) part + 7;
  v ^= v >> 31;
  v *= 0xbf58476d1ce4e5b9ul;
  v ^= v >> 29;
  return (double) (v >> 11) / 4503599627370496.0 - 1.0;
}

/* In place, length R, iterative radix 2 (bit-reversed input order first). */
static void row_fft(cplx *a)
{
  long i, j, len, k, half;
  for (i = 1, j = 0; i < R; i++) {
    long bit = R >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j |= bit;
    if (i < j) { cplx t = a[i]; a[i] = a[j]; a[j] = t; }
  }
  for (len = 2; len <= R; len <<= 1) {
    half = len / 2;
    for (i = 0; i < R; i += len)
      for (k = 0; k < half; k++) {
        cplx w = row_roots[k * (R / len)], u = a[i + k], v = a[i + k + half], t;
        t.re = v.re * w.re - v.im * w.im;
        t.im = v.re * w.im + v.im * w.re;
        a[i + k].re = u.re + t.re;     a[i + k].im = u.im + t.im;
        a[i + k + half].re = u.re - t.re; a[i + k + half].im = u.im - t.im;
      }
  }
}

/* to[r][c] = from[c][r] for this process's rows r. */
static void transpose(cplx **from, cplx **to, long first, long last)
{
  long r, c;
  for (r = first; r < last; r++)
    for (c = 0; c < R; c++) to[r][c] = from[c][r];
}

void SlaveStart(void)
{
  long MyNum, first, last, r, c;
  unsigned long tstart, tend;

  LOCK(Global->idlock)
  MyNum = Global->id++;
  UNLOCK(Global->idlock)
  first = FIRST(MyNum);
  last = FIRST(MyNum + 1);

  BARRIER(Global->step, P)
  CLOCK(tstart)
  /* x[n2][n1] holds point n1 + R n2. */
  transpose(x, y, first, last);                 /* y[n1][n2] */
  BARRIER(Global->step, P)
  for (r = first; r < last; r++) {
    row_fft(y[r]);                              /* y[n1][k2] */
    for (c = 0; c < R; c++) {                   /* times w_N^(n1 k2) */
      double angle = -2.0 * M_PI * (double) ((r * c) % N) / (double) N;
      double wr = cos(angle), wi = sin(angle), re = y[r][c].re, im = y[r][c].im;
      y[r][c].re = re * wr - im * wi;
      y[r][c].im = re * wi + im * wr;
    }
  }
  BARRIER(Global->step, P)
  transpose(y, x, first, last);                 /* x[k2][n1] */
  BARRIER(Global->step, P)
  for (r = first; r < last; r++) row_fft(x[r]); /* x[k2][k1] */
  BARRIER(Global->step, P)
  transpose(x, y, first, last);                 /* y[k1][k2]: point k2 + R k1, natural order */
  BARRIER(Global->step, P)
  CLOCK(tend)
  if (MyNum == 0) { Global->starttime = tstart; Global->endtime = tend; }
}

/* One transform of x (into y) by P processes. */
static void run(void)
{
  Global->id = 0;
  CREATE(SlaveStart, P)
  WAIT_FOR_END(P - 1)
}

int main(int argc, char *argv[])
{
  int c;
  long n, p, k;
  unsigned long hash = 1469598103934665603ul, elapsed;
  double worst = 0.0;

  MAIN_INITENV(,1000000)
  while ((c = getopt(argc, argv, "m:p:h")) != -1) {
    switch (c) {
    case 'm': M = option_long("fft", 'm', optarg); break;
    case 'p': P = option_long("fft", 'p', optarg); break;
    default:
      fprintf(stderr, "usage: %s [-m M] [-p P]\n", argv[0]);
      exit(c == 'h' ? 0 : OPTION_REFUSED);
    }
  }
  option_no_operands(argc, argv, optind);
  if (M < 2 || M > 30 || M % 2 != 0 || P < 1 || P > MAX_PROCS || P > (1L << (M / 2))) {
    fprintf(stderr, "fft: need M even in 2..30 and 1 <= P <= min(%d, 2^(M/2))\n", MAX_PROCS);
    exit(OPTION_REFUSED);
  }
  N = 1L << M;
  R = 1L << (M / 2);

  Global = (struct GlobalMemory *) G_MALLOC(sizeof(struct GlobalMemory))
  x = (cplx **) G_MALLOC(R * sizeof(cplx *))
  y = (cplx **) G_MALLOC(R * sizeof(cplx *))
  row_roots = (cplx *) G_MALLOC(R / 2 * sizeof(cplx) + sizeof(cplx))
  for (p = 0; p < P; p++) {     /* process p's rows, homed at its node */
    cplx *xs = (cplx *) G_MALLOC((FIRST(p + 1) - FIRST(p)) * R * sizeof(cplx), p)
    cplx *ys = (cplx *) G_MALLOC((FIRST(p + 1) - FIRST(p)) * R * sizeof(cplx), p)
    for (n = FIRST(p); n < FIRST(p + 1); n++) {
      x[n] = xs + (n - FIRST(p)) * R;
      y[n] = ys + (n - FIRST(p)) * R;
    }
  }
  for (k = 0; k < R / 2; k++) {
    row_roots[k].re = cos(-2.0 * M_PI * (double) k / (double) R);
    row_roots[k].im = sin(-2.0 * M_PI * (double) k / (double) R);
  }
  for (n = 0; n < N; n++) {
    x[n / R][n % R].re = input(n, 0);
    x[n / R][n % R].im = input(n, 1);
  }
  LOCKINIT(Global->idlock)
  BARINIT(Global->step, P)

  run();
  elapsed = Global->endtime - Global->starttime;
  for (n = 0; n < N; n++) {     /* the transform's bits, in order */
    unsigned long bits[2];
    memcpy(bits, &y[n / R][n % R], sizeof bits);
    hash = (hash ^ bits[0]) * 1099511628211ul;
    hash = (hash ^ bits[1]) * 1099511628211ul;
  }
  /* The inverse: conjugate, transform, conjugate, divide by N. */
  for (n = 0; n < N; n++) {
    x[n / R][n % R].re = y[n / R][n % R].re;
    x[n / R][n % R].im = -y[n / R][n % R].im;
  }
  run();
  for (n = 0; n < N; n++) {
    double re = y[n / R][n % R].re / (double) N, im = -y[n / R][n % R].im / (double) N;
    if (fabs(re - input(n, 0)) > worst) worst = fabs(re - input(n, 0));
    if (fabs(im - input(n, 1)) > worst) worst = fabs(im - input(n, 1));
  }

  printf("FFT: %ld points (%ld x %ld), %ld processes\n", N, R, R, P);
  printf("time %lu us (the forward transform); the inverse %s the input (largest error %.1e)\n", elapsed,
         worst < 1e-9 ? "gives back" : "DOES NOT give back", worst);
  printf("checksum: %016lx\n", hash);
  MAIN_END
}
