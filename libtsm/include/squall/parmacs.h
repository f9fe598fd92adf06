// SPDX-License-Identifier: BSD-3-Clause
/* What the PARMACS macros (parmacs.m4, installed in share/squall) expand to: SPLASH-2 style
 * programs on transparent shared memory, one process per node under squallrun.
 *
 *   m4 -s -Ulen -Uindex share/squall/parmacs.m4 prog.C > prog.c
 *   cc prog.c -lsquall-tsm -lsquall-kf && squallrun -n 4 ./a.out -p4
 *
 * The model (README, "PARMACS"): before main, every node starts the runtime (the
 * constructor MAIN_ENV defines); the program's data and bss become TSM memory homed at node
 * 0, and nodes other than 0 wait to be given a function by CREATE. Node 0 runs main. A node
 * runs up to SQUALL_WORKERS_PER_NODE workers (by default as many as it has processors,
 * squall::processors()) as threads sharing its memory in hardware; CREATE fills node 0
 * first, then node 1, and so on. Every
 * node has the same address-space layout (the runtime restarts the program once with
 * address randomisation off), so pointers into G_MALLOC memory and into the globals mean
 * the same everywhere. Memory is sequentially consistent with one worker per node; with
 * several, as the processor orders threads (squall/tsm.hpp). The synchronisation calls need
 * no fences. Errors end the job with a message naming the macro. */
#ifndef SQUALL_PARMACS_H
#define SQUALL_PARMACS_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

#include <squall/squall.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A lock, barrier, pause or global subscript as stored in shared memory: a job-wide id
 * (plus one, so that zeroed memory reads as "never initialised"). */
typedef struct { unsigned long id; } squall_parmacs_lock_t;
typedef struct { unsigned long id; } squall_parmacs_barrier_t;
typedef struct { unsigned long id; } squall_parmacs_pause_t;
typedef struct { unsigned long id; } squall_parmacs_gs_t;

void squall_parmacs_boot(int argc, char** argv, char** envp, void (*kf_function)(void));

void* squall_parmacs_malloc(size_t bytes, long home); /* home < 0: no placement */
void squall_parmacs_free(void* p);

/* workers < 0: start one worker running f (the loop form); else start workers - 1 and
 * run f here (CREATE(f, P)). */
void squall_parmacs_create(void (*f)(void), long workers);
void squall_parmacs_wait_for_end(long n);

void squall_parmacs_lock_init(squall_parmacs_lock_t* locks, long count);
void squall_parmacs_lock(squall_parmacs_lock_t* l);
void squall_parmacs_unlock(squall_parmacs_lock_t* l);

void squall_parmacs_barrier_init(squall_parmacs_barrier_t* b, long count); /* 0: from BARRIER */
void squall_parmacs_barrier(squall_parmacs_barrier_t* b, long count);      /* 0: from BARINIT */

void squall_parmacs_pause_init(squall_parmacs_pause_t* p);
void squall_parmacs_pause_set(squall_parmacs_pause_t* p);   /* publishes one */
void squall_parmacs_pause_clear(squall_parmacs_pause_t* p); /* drops what is published */
void squall_parmacs_pause_wait(squall_parmacs_pause_t* p);  /* waits for one and takes it */

void squall_parmacs_gs_init(squall_parmacs_gs_t* g);
/* The next of 0..max, or -1 once all are taken; after -1 has gone to `processes` callers
 * the subscripts start again at 0. */
long squall_parmacs_getsub(squall_parmacs_gs_t* g, long max, long processes);

unsigned long squall_parmacs_clock(void); /* microseconds, one clock for every node */

#ifdef __cplusplus
}
#endif

/* MAIN_ENV's constructor: the runtime starts before main, on every node. It names a
 * function of libsquall-kf so that the linker keeps that library ahead of the C library
 * (with --as-needed it would otherwise come after it), which is what lets the runtime's
 * read, write and fread reach shared memory whatever its tags. */
#define SQUALL_PARMACS_MAIN_ENV                                                            \
  __attribute__((constructor(101))) static void squall_parmacs_start(int argc, char** argv, \
                                                                      char** envp) {        \
    squall_parmacs_boot(argc, argv, envp, (void (*)(void))squall_nodes);                    \
  }

#endif
