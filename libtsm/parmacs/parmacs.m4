dnl SPDX-License-Identifier: BSD-3-Clause
divert(-1)
# PARMACS macros for Squall's transparent shared memory (squall/parmacs.h has the model).
#   m4 -s -Ulen -Uindex parmacs.m4 prog.C > prog.c
#   cc prog.c -lsquall-tsm -lsquall-kf
#   squallrun -n 4 ./a.out ...
# Statement macros expand to one braced block, so they work with or without a trailing
# semicolon; G_MALLOC and NU_MALLOC end with one, as in SPLASH-2 (the _F forms do not).
# No expansion holds the end of a C comment, since m4 also expands macros inside comments.

define(MAIN_ENV, `
#include <squall/parmacs.h>
SQUALL_PARMACS_MAIN_ENV
')
define(EXTERN_ENV, `
#include <squall/parmacs.h>
')
define(MAIN_INITENV, `{;}')
define(MAIN_END, `{exit(0);}')

define(G_MALLOC, `squall_parmacs_malloc(($1), ifelse(`$2', `', -1, `($2)'));')
define(NU_MALLOC, `squall_parmacs_malloc(($1), ifelse(`$2', `', -1, `($2)'));')
define(G_MALLOC_F, `squall_parmacs_malloc(($1), ifelse(`$2', `', -1, `($2)'))')
define(NU_MALLOC_F, `squall_parmacs_malloc(($1), ifelse(`$2', `', -1, `($2)'))')
define(G_FREE, `{squall_parmacs_free($1);}')
define(NU_FREE, `{squall_parmacs_free($1);}')

define(CREATE, `{squall_parmacs_create((void (*)(void))($1), ifelse(`$2', `', -1, `($2)'));}')
define(WAIT_FOR_END, `{squall_parmacs_wait_for_end(ifelse(`$1', `', 0, `($1)'));}')
define(CLOCK, `{($1) = squall_parmacs_clock();}')

define(BARDEC, `squall_parmacs_barrier_t $1;')
define(BARINIT, `{squall_parmacs_barrier_init(&($1), ifelse(`$2', `', 0, `($2)'));}')
define(BARRIER, `{squall_parmacs_barrier(&($1), ifelse(`$2', `', 0, `($2)'));}')
define(BAREXCLUDE, `{;}')
define(BARINCLUDE, `{;}')

define(LOCKDEC, `squall_parmacs_lock_t $1;')
define(LOCKINIT, `{squall_parmacs_lock_init(&($1), 1);}')
define(LOCK, `{squall_parmacs_lock(&($1));}')
define(UNLOCK, `{squall_parmacs_unlock(&($1));}')

define(ALOCKDEC, `squall_parmacs_lock_t $1[$2];')
define(ALOCKINIT, `{squall_parmacs_lock_init(&(($1)[0]), ($2));}')
define(ALOCK, `{squall_parmacs_lock(&(($1)[$2]));}')
define(AULOCK, `{squall_parmacs_unlock(&(($1)[$2]));}')
define(AGETL, `(($1)[$2])')

define(PAUSEDEC, `squall_parmacs_pause_t $1;')
define(PAUSEINIT, `{squall_parmacs_pause_init(&($1));}')
define(SETPAUSE, `{squall_parmacs_pause_set(&($1));}')
define(CLEARPAUSE, `{squall_parmacs_pause_clear(&($1));}')
define(WAITPAUSE, `{squall_parmacs_pause_wait(&($1));}')

define(GSDEC, `squall_parmacs_gs_t $1;')
define(GSINIT, `{squall_parmacs_gs_init(&($1));}')
define(GETSUB, `{($2) = squall_parmacs_getsub(&($1), ($3), ($4));}')
define(NU_GSDEC, `GSDEC($1)')
define(NU_GSINIT, `GSINIT($1)')
define(NU_GETSUB, `GETSUB($1, $2, $3, $4)')

divert(0)dnl
