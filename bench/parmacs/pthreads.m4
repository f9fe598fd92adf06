dnl SPDX-License-Identifier: BSD-3-Clause
divert(-1)
# The PARMACS macros on POSIX threads (parmacs_pthreads.h), for bench/parmacs/parmacs: the
# same programs as with Squall's parmacs.m4, as threads of one process.
#   m4 -s -Ulen -Uindex pthreads.m4 prog.C > prog.c && cc -pthread -I bench/parmacs prog.c
define(MAIN_ENV, `
#include "parmacs_pthreads.h"
')
define(EXTERN_ENV, `
#include "parmacs_pthreads.h"
')
define(MAIN_INITENV, `{;}')
define(MAIN_END, `{exit(0);}')

define(G_MALLOC, `pmp_malloc($1);')
define(NU_MALLOC, `pmp_malloc($1);')
define(G_MALLOC_F, `pmp_malloc($1)')
define(NU_MALLOC_F, `pmp_malloc($1)')
define(G_FREE, `{free($1);}')
define(NU_FREE, `{free($1);}')

define(CREATE, `{pmp_create((void (*)(void))($1), ifelse(`$2', `', -1, `($2)'));}')
define(WAIT_FOR_END, `{pmp_wait_for_end();}')
define(CLOCK, `{($1) = pmp_clock();}')

define(BARDEC, `pmp_barrier_t $1;')
define(BARINIT, `{pmp_barrier_init(&($1), ifelse(`$2', `', 0, `($2)'));}')
define(BARRIER, `{pmp_barrier(&($1), ifelse(`$2', `', 0, `($2)'));}')
define(BAREXCLUDE, `{;}')
define(BARINCLUDE, `{;}')

define(LOCKDEC, `pthread_mutex_t $1;')
define(LOCKINIT, `{pthread_mutex_init(&($1), NULL);}')
define(LOCK, `{pthread_mutex_lock(&($1));}')
define(UNLOCK, `{pthread_mutex_unlock(&($1));}')

define(ALOCKDEC, `pthread_mutex_t $1[$2];')
define(ALOCKINIT, `{long pmp_i; for (pmp_i = 0; pmp_i < ($2); pmp_i++) pthread_mutex_init(&(($1)[pmp_i]), NULL);}')
define(ALOCK, `{pthread_mutex_lock(&(($1)[$2]));}')
define(AULOCK, `{pthread_mutex_unlock(&(($1)[$2]));}')
define(AGETL, `(($1)[$2])')

define(PAUSEDEC, `pmp_pause_t $1;')
define(PAUSEINIT, `{pmp_pause_init(&($1));}')
define(SETPAUSE, `{pmp_pause_set(&($1));}')
define(CLEARPAUSE, `{pmp_pause_clear(&($1));}')
define(WAITPAUSE, `{pmp_pause_wait(&($1));}')

define(GSDEC, `pmp_gs_t $1;')
define(GSINIT, `{pmp_gs_init(&($1));}')
define(GETSUB, `{($2) = pmp_getsub(&($1), ($3), ($4));}')
define(NU_GSDEC, `GSDEC($1)')
define(NU_GSINIT, `GSINIT($1)')
define(NU_GETSUB, `GETSUB($1, $2, $3, $4)')

divert(0)dnl
