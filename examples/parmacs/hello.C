// SPDX-License-Identifier: BSD-3-Clause
/* A first PARMACS program: P processes, one per node, take ids under a `LOCK', add them up
 * and meet at a `BARRIER'. Built with the compiler wrapper or squall_parmacs_program():
 *   squall-parmacs-cc -o hello hello.C hello.H
 *   squallrun -n 2 ./hello -p2 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

MAIN_ENV

#include "hello.h"

struct GlobalMemory *Global;  /* globals are shared by every process */
long P = 1;

void Work(void)
{
  long me;
  LOCK(Global->idlock)
  me = Global->id++;
  Global->sum += me;
  UNLOCK(Global->idlock)
  BARRIER(Global->start, P)
  printf("hello: process %ld of %ld\n", me, P);
}

int main(int argc, char *argv[])
{
  long p;
  if (argc == 2 && strncmp(argv[1], "-p", 2) == 0) P = atol(argv[1] + 2);
  if (P < 1) { fprintf(stderr, "usage: hello [-pP]\n"); exit(1); }
  MAIN_INITENV
  Global = (struct GlobalMemory *) G_MALLOC(sizeof(struct GlobalMemory))
  LOCKINIT(Global->idlock)
  BARINIT(Global->start)
  Global->id = 0;
  Global->sum = 0;
  for (p = 1; p < P; p++) CREATE(Work)
  Work();
  WAIT_FOR_END(P - 1)
  printf("hello: %ld processes, ids add up to %ld\n", P, Global->sum);
  MAIN_END
}
