/* SPDX-License-Identifier: BSD-3-Clause */
/* The PARMACS macros on plain POSIX threads (pthreads.m4 expands to these): the peer that
 * bench/parmacs/parmacs measures Squall's PARMACS against. One process; CREATE starts a
 * thread; G_MALLOC is malloc; locks are mutexes; BARRIER, the PAUSE family and GETSUB have
 * the meaning Squall's have (squall/parmacs.h), built on one mutex and condition each. Errors
 * end the program with a message. Only what SPLASH-2 style programs use; single-file programs
 * (everything here is static). */
#ifndef SQUALL_PARMACS_PTHREADS_H
#define SQUALL_PARMACS_PTHREADS_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

typedef struct {
  pthread_mutex_t m;
  pthread_cond_t c;
  long expected, arrived, generation; /* expected: BARINIT's count, 0 if none */
} pmp_barrier_t;

typedef struct {
  pthread_mutex_t m;
  pthread_cond_t c;
  long value;
} pmp_pause_t;

typedef struct {
  pthread_mutex_t m;
  long next, done;
} pmp_gs_t;

#define PMP_MAX_THREADS 1024
static pthread_t pmp_threads[PMP_MAX_THREADS];
static long pmp_thread_count;

static void pmp_fail(const char *what) {
  fprintf(stderr, "parmacs (pthreads): %s\n", what);
  exit(1);
}

static void *pmp_start(void *f) {
  ((void (*)(void)) f)();
  return NULL;
}

static void pmp_create(void (*f)(void), long workers) {
  long count = workers < 0 ? 1 : workers - 1, k;
  for (k = 0; k < count; k++) {
    if (pmp_thread_count == PMP_MAX_THREADS) pmp_fail("CREATE: too many threads");
    if (pthread_create(&pmp_threads[pmp_thread_count++], NULL, pmp_start, (void *) f) != 0) pmp_fail("pthread_create");
  }
  if (workers >= 0) f();
}

static void pmp_wait_for_end(void) {
  long k;
  for (k = 0; k < pmp_thread_count; k++) pthread_join(pmp_threads[k], NULL);
  pmp_thread_count = 0;
}

static void pmp_barrier_init(pmp_barrier_t *b, long n) {
  pthread_mutex_init(&b->m, NULL);
  pthread_cond_init(&b->c, NULL);
  b->expected = n;
  b->arrived = b->generation = 0;
}

static void pmp_barrier(pmp_barrier_t *b, long n) {
  if (n <= 0) n = b->expected;
  if (n <= 0) pmp_fail("BARRIER: no count, neither in BARRIER nor in BARINIT");
  pthread_mutex_lock(&b->m);
  if (++b->arrived == n) {
    b->arrived = 0;
    b->generation++;
    pthread_cond_broadcast(&b->c);
  } else {
    long g = b->generation;
    while (g == b->generation) pthread_cond_wait(&b->c, &b->m);
  }
  pthread_mutex_unlock(&b->m);
}

static void pmp_pause_init(pmp_pause_t *p) {
  pthread_mutex_init(&p->m, NULL);
  pthread_cond_init(&p->c, NULL);
  p->value = 0;
}

static void pmp_pause_set(pmp_pause_t *p) {
  pthread_mutex_lock(&p->m);
  p->value++;
  pthread_cond_signal(&p->c);
  pthread_mutex_unlock(&p->m);
}

static void pmp_pause_clear(pmp_pause_t *p) {
  pthread_mutex_lock(&p->m);
  p->value = 0;
  pthread_mutex_unlock(&p->m);
}

static void pmp_pause_wait(pmp_pause_t *p) {
  pthread_mutex_lock(&p->m);
  while (p->value == 0) pthread_cond_wait(&p->c, &p->m);
  p->value--;
  pthread_mutex_unlock(&p->m);
}

static void pmp_gs_init(pmp_gs_t *g) {
  pthread_mutex_init(&g->m, NULL);
  g->next = g->done = 0;
}

/* 0..max once each, then -1 to each of the `processes` callers, then again from 0. */
static long pmp_getsub(pmp_gs_t *g, long max, long processes) {
  long s = -1;
  pthread_mutex_lock(&g->m);
  if (g->next <= max) {
    s = g->next++;
  } else if (++g->done >= processes) {
    g->next = 0;
    g->done = 0;
  }
  pthread_mutex_unlock(&g->m);
  return s;
}

static void *pmp_malloc(size_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 64, bytes == 0 ? 1 : bytes) != 0) pmp_fail("G_MALLOC: out of memory");
  return p;
}

static unsigned long pmp_clock(void) {
  struct timeval t;
  gettimeofday(&t, NULL);
  return (unsigned long) t.tv_sec * 1000000ul + (unsigned long) t.tv_usec;
}

#endif
